# install() rules and the Debian package (CPack DEB), included by the top-level
# CMakeLists.txt. `scripts/package.sh` builds the package; deploy/README.md says what goes
# where. Layout (Debian 12): binaries in /usr/bin, libopmap_inject.so in /usr/lib/opmap/,
# units in /usr/lib/systemd/system, the sysusers entry in /usr/lib/sysusers.d, example
# configs in /etc/opmap (conffiles: an upgrade keeps local edits), docs in
# /usr/share/doc/opmap. Nothing is started by installing.
include(GNUInstallDirs)

install(TARGETS opmap opmap-agent opmap-collector opmap-demo-infer
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS opmap_inject LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/opmap
  NAMELINK_SKIP)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/opmap-agent.service
              ${PROJECT_SOURCE_DIR}/deploy/systemd/opmap-collector.service
  DESTINATION lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/opmap.sysusers
  DESTINATION lib/sysusers.d RENAME opmap.conf)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/agent.conf
              ${PROJECT_SOURCE_DIR}/deploy/config/tokens.example
  DESTINATION /etc/opmap)
# It may hold the ClickHouse password: 0640, and postinst gives it to group opmap (the
# collector's), as its own comment asks.
install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/collector.conf
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ
  DESTINATION /etc/opmap)
# README.md, docs/*.md and deploy/README.md (the install guide) in their own layout, so
# their links to each other resolve under /usr/share/doc/opmap; links to files the
# package does not ship become plain paths (ship_docs.py). tests/integration/
# package_test.sh checks every relative link of the installed docs.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
install(CODE "
  execute_process(COMMAND \"${Python3_EXECUTABLE}\"
                          \"${CMAKE_CURRENT_LIST_DIR}/ship_docs.py\" \"${PROJECT_SOURCE_DIR}\"
                          \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\"
                  RESULT_VARIABLE _ship_rc)
  if(NOT _ship_rc EQUAL 0)
    message(FATAL_ERROR \"ship_docs.py failed: \${_ship_rc}\")
  endif()")

# Debian's copyright and changelog files (a native package: changelog.gz), the changelog
# generated so its version is the tree's.
set(_pkg ${CMAKE_CURRENT_BINARY_DIR}/package)
file(MAKE_DIRECTORY ${_pkg})
string(TIMESTAMP _date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${_pkg}/changelog
  "opmap (${OPMAP_VERSION_STRING}) unstable; urgency=medium\n\n"
  "  * Built from the opmap source tree (${OPMAP_VERSION_STRING}).\n\n"
  " -- opmap maintainers <opmap@example.org>  ${_date}\n")
find_program(GZIP_PROGRAM gzip)
if(GZIP_PROGRAM)
  add_custom_command(OUTPUT ${_pkg}/changelog.gz
    COMMAND ${GZIP_PROGRAM} -9nc ${_pkg}/changelog > ${_pkg}/changelog.gz
    DEPENDS ${_pkg}/changelog VERBATIM)
  add_custom_target(opmap_package_changelog ALL DEPENDS ${_pkg}/changelog.gz)
  install(FILES ${_pkg}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()
install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The maintainer scripts, with the conffiles list.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "opmap")
set(CPACK_PACKAGE_VERSION "${OPMAP_VERSION_STRING}")
set(CPACK_PACKAGE_CONTACT "opmap maintainers <opmap@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "profiling agent and collector for ML inference fleets")
set(CPACK_PACKAGE_DESCRIPTION
  "opmap samples hardware counters and GPU kernel timelines of inference\nprocesses, streams them to a collector, maps kernels to operators and layers,\nand reports latency percentiles, memory-stall fractions, MFU and bottleneck\nclasses.")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# postinst creates the collector's user with adduser where systemd-sysusers is absent.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://localhost/opmap")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  "${CMAKE_CURRENT_LIST_DIR}/conffiles;${CMAKE_CURRENT_LIST_DIR}/postinst;${CMAKE_CURRENT_LIST_DIR}/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
