# `cmake --install <build> [--prefix P]`: the controller runtime as a library other projects build
# controllers on (docs/writing-a-controller.md), plus the daemon.
#   P/include/kube-controller-runtime/pkg/<part>/*.h    headers, included as "pkg/<part>/x.h"
#   P/lib/libkcm_<part>.a                               static libraries
#   P/lib/cmake/KubeControllerRuntime/                  find_package(KubeControllerRuntime)
#   P/bin/kube-controller-manager
# Consumers link the imported targets KubeControllerRuntime::<part> (runtime, informers, client,
# api, cache, workqueue, record, leaderelection, server, metrics, util); each brings the parts and
# third-party libraries it needs. Parts that are specific to the controller manager
# (pkg/controller, controllers/*, cmd/) are not exported.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KCR_PACKAGE KubeControllerRuntime)
set(KCR_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/kube-controller-runtime)
set(KCR_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/${KCR_PACKAGE})
set(KCR_PARTS
    util
    metrics
    api
    client
    workqueue
    cache
    informers
    runtime
    record
    leaderelection
    sharding
    server)

# The exported parts are KCR_PARTS plus every kcm_* library they link, directly or not (so a part
# that starts depending on another one keeps the export set complete instead of failing the
# configure); each gets EXPORT_NAME = its name without "kcm_" and its directory's headers.
set(kcr_targets)
set(kcr_queue)
foreach(part ${KCR_PARTS})
  list(APPEND kcr_queue kcm_${part})
endforeach()
while(kcr_queue)
  list(POP_FRONT kcr_queue target)
  if(target IN_LIST kcr_targets)
    continue()
  endif()
  list(APPEND kcr_targets ${target})
  get_target_property(libs ${target} LINK_LIBRARIES)
  foreach(lib IN LISTS libs)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
    if(lib MATCHES "^kcm_" AND TARGET ${lib})
      list(APPEND kcr_queue ${lib})
    endif()
  endforeach()
endwhile()

foreach(target ${kcr_targets})
  string(REGEX REPLACE "^kcm_" "" name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  get_target_property(dir ${target} SOURCE_DIR)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir})
  # Implementation-only headers stay out: pkg/api/internal (simdjson) and the OpenSSL
  # owning pointers are included only by the parts' own .cc files; the test doubles of
  # pkg/<part>/testing belong to this repository's tests.
  install(
    DIRECTORY ${dir}/
    DESTINATION ${KCR_INCLUDE_DIR}/${rel}
    FILES_MATCHING
    PATTERN "*.h"
    PATTERN "internal" EXCLUDE
    PATTERN "testing" EXCLUDE
    PATTERN "openssl_ptr.h" EXCLUDE)
endforeach()

install(
  TARGETS ${kcr_targets}
  EXPORT ${KCR_PACKAGE}Targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES
  DESTINATION ${KCR_INCLUDE_DIR})
install(
  EXPORT ${KCR_PACKAGE}Targets
  NAMESPACE ${KCR_PACKAGE}::
  DESTINATION ${KCR_CONFIG_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/${KCR_PACKAGE}Config.cmake.in
                              ${PROJECT_BINARY_DIR}/${KCR_PACKAGE}Config.cmake
                              INSTALL_DESTINATION ${KCR_CONFIG_DIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/${KCR_PACKAGE}ConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/${KCR_PACKAGE}Config.cmake
              ${PROJECT_BINARY_DIR}/${KCR_PACKAGE}ConfigVersion.cmake DESTINATION ${KCR_CONFIG_DIR})

install(TARGETS kube-controller-manager RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
