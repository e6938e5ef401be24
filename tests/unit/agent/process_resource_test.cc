// agent/daemon/process_resource.h: what a process's OPMAP_LABELS becomes in its Resource
// record — bounded, well-formed keys only, the agent's own labels not overridable — and
// the platform labels the agent adds from what NVML told it.
#include <string>

#include <gtest/gtest.h>

#include "agent/daemon/process_resource.h"

namespace opmap::agent {
namespace {

TEST(JobLabels, WellFormedPairsKeptMalformedAndReservedSkipped) {
  google::protobuf::Map<std::string, std::string> labels;
  labels["injection"] = "preload";
  AddJobLabels(" gpu_pool = h100-a ,tier=prod,novalue,=x,bad key=1,injection=forged,"
               "k8s.io/zone=eu-1,power_limit_w=350\x01",
               &labels);
  EXPECT_EQ(labels.size(), 5u);
  EXPECT_EQ(labels["gpu_pool"], "h100-a");
  EXPECT_EQ(labels["tier"], "prod");
  EXPECT_EQ(labels["k8s.io/zone"], "eu-1");
  EXPECT_EQ(labels["power_limit_w"], "350?");  // printable ASCII only
  EXPECT_EQ(labels["injection"], "preload");   // the agent's, not the process's
}

TEST(JobLabels, AtMost32AndBoundedSizes) {
  google::protobuf::Map<std::string, std::string> labels;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "k" + std::to_string(i) + "=v,";
  text += std::string(64, 'a') + "=too-long-key," + "x=" + std::string(256, 'v');
  AddJobLabels(text, &labels);
  EXPECT_EQ(labels.size(), 32u);
  EXPECT_FALSE(labels.contains(std::string(64, 'a')));
  EXPECT_FALSE(labels.contains("x"));
}

TEST(PlatformLabels, KnownFiguresReplaceTheProcesssUnknownOnesLeaveThem) {
  opmap::v1::Resource r;
  (*r.mutable_labels())["gpu_name"] = "forged";
  (*r.mutable_labels())["driver_version"] = "operator-set";
  opmap::v1::Gpu* a = r.add_gpus();
  a->set_name("NVIDIA H100 80GB HBM3");
  a->set_power_limit_mw(700000);
  opmap::v1::Gpu* b = r.add_gpus();
  b->set_name("NVIDIA H100 80GB HBM3");
  b->set_power_limit_mw(500000);
  AddPlatformLabels(&r);
  EXPECT_EQ(r.labels().at("gpu_name"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.labels().at("power_limit_w"), "500+700");
  EXPECT_EQ(r.labels().at("driver_version"), "operator-set");  // NVML gave none

  opmap::v1::Resource none;
  (*none.mutable_labels())["gpu_name"] = "labelled by the operator";
  none.add_gpus();  // no name, no limit: nothing known
  AddPlatformLabels(&none);
  EXPECT_EQ(none.labels().at("gpu_name"), "labelled by the operator");
  EXPECT_FALSE(none.labels().contains("power_limit_w"));
}

}  // namespace
}  // namespace opmap::agent
