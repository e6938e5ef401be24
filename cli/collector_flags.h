// The flag groups of the collector commands (import, query, export, report, signoff) as
// key tables for cli/command_flags.h: connection (--collector, --token, --token-file,
// --tls-*, --timeout) and selection (--since, --from, --to, --host, --model, --revision,
// --label; repeatable).
#ifndef OPMAP_CLI_COLLECTOR_FLAGS_H_
#define OPMAP_CLI_COLLECTOR_FLAGS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "cli/command_flags.h"
#include "cli/connection_flags.h"
#include "cli/selection_flags.h"

namespace opmap::cli {

// The connection flags (--collector, --token, --token-file, --tls-*, --timeout).
absl::Status SetCollectors(std::string_view list, ConnectionFlags* flags);
absl::Status SetTimeout(std::string_view text, ConnectionFlags* flags);
template <typename C>
void AddConnectionKeys(ConnectionFlags C::*field, FlagKeys<C>* keys) {
  auto string_field = [field](std::string ConnectionFlags::*member) {
    return [field, member](std::string_view v, C* c) -> absl::Status {
      if (v.empty()) return absl::InvalidArgumentError("needs a value");
      (c->*field).*member = std::string(v);
      return absl::OkStatus();
    };
  };
  keys->push_back({"collector", false, "HOST:PORT[,...]", "",
                   [field](std::string_view v, C* c) { return SetCollectors(v, &(c->*field)); }});
  keys->push_back({"token", false, "T", "", string_field(&ConnectionFlags::token)});
  keys->push_back({"token-file", false, "FILE", "", string_field(&ConnectionFlags::token_file)});
  keys->push_back({"tls-ca", false, "FILE", "", string_field(&ConnectionFlags::tls_ca)});
  keys->push_back({"tls-cert", false, "FILE", "", string_field(&ConnectionFlags::tls_cert)});
  keys->push_back({"tls-key", false, "FILE", "", string_field(&ConnectionFlags::tls_key)});
  keys->push_back({"tls-server-name", false, "NAME", "",
                   string_field(&ConnectionFlags::tls_server_name)});
  keys->push_back({"timeout", false, "D", "",
                   [field](std::string_view v, C* c) { return SetTimeout(v, &(c->*field)); }});
}

// The selection flags (--since, --from, --to, --host, --model, --revision, --label).
absl::Status SetSelection(std::string_view flag, std::string_view value, SelectionFlags* flags);
template <typename C>
void AddSelectionKeys(SelectionFlags C::*field, FlagKeys<C>* keys) {
  for (std::string_view name : {"since", "from", "to", "host", "model", "revision", "label"}) {
    keys->push_back({name, false, "", "", [field, name](std::string_view v, C* c) {
                       return SetSelection(name, v, &(c->*field));
                     }});
  }
}

}  // namespace opmap::cli

#endif  // OPMAP_CLI_COLLECTOR_FLAGS_H_
