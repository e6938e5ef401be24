// Large traces: the analysis holds hundreds of MB to GB of event arrays that grow as they
// are read, and with 4 KiB pages their page faults and TLB misses cost as much as parsing
// (measured on a 7.4 GB trace: 56 s, of which 24 s in the kernel; with transparent huge
// pages 29 s, the same output). glibc (2.35+) asks for huge pages for its heap only when
// started with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, so `opmap analyze` and `opmap
// import` re-exec themselves once with it set, where the kernel's THP mode is `madvise`
// (with `always` they get huge pages anyway; with `never` there is nothing to ask for)
// and their input files add up to 4 MiB or more (the exec costs about 30 ms).
// OPMAP_NO_HUGE_PAGES=1 turns this off; a failed exec just carries on without.
#ifndef OPMAP_CLI_HUGE_PAGE_MALLOC_H_
#define OPMAP_CLI_HUGE_PAGE_MALLOC_H_

namespace opmap::cli {

// Returns only when no re-exec happened (already set, turned off, not useful, or failed).
void ReexecWithHugePageMalloc(char** argv);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_HUGE_PAGE_MALLOC_H_
