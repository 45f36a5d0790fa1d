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
    server)

set(kcr_targets)
foreach(part ${KCR_PARTS})
  set_target_properties(kcm_${part} PROPERTIES EXPORT_NAME ${part})
  list(APPEND kcr_targets kcm_${part})
  # Implementation-only headers stay out: pkg/api/internal (simdjson) and pkg/server's OpenSSL
  # owning pointers are included only by the parts' own .cc files.
  install(
    DIRECTORY ${PROJECT_SOURCE_DIR}/pkg/${part}/
    DESTINATION ${KCR_INCLUDE_DIR}/pkg/${part}
    FILES_MATCHING
    PATTERN "*.h"
    PATTERN "internal" EXCLUDE
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
