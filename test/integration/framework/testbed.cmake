# Helpers for integration tests that use kcm_testenv. Include this file from a test folder's
# CMakeLists.txt (folders are added in alphabetical order, so do not rely on framework/ first):
#   include(${PROJECT_SOURCE_DIR}/test/integration/framework/testbed.cmake)

# kcm_shared_testbed_dir(<var>): the state dir of the testbed shared by one ctest run.
function(kcm_shared_testbed_dir var)
  set(${var} ${CMAKE_BINARY_DIR}/testbed-shared PARENT_SCOPE)
endfunction()

# kcm_use_shared_testbed(<target>): after kcm_test(<target> LABEL integration ...), makes each
# discovered test of <target> require the ctest fixture that starts one testbed (3 KWOK nodes,
# no controller manager) and points KCM_TESTBED_DIR_EXISTING at it. Tests then share one API
# server, so each test must work in its own namespace. A test whose TestbedOptions the shared
# testbed does not fit (e.g. upstream_kcm = true) still starts a private one.
function(kcm_use_shared_testbed target)
  kcm_shared_testbed_dir(dir)
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}_shared_testbed.cmake)
  # gtest_discover_tests sets <target>_TESTS in the ctest scope; this include file runs after it.
  file(WRITE ${script}
    "if(DEFINED ${target}_TESTS)\n"
    "  set_tests_properties(\${${target}_TESTS} PROPERTIES FIXTURES_REQUIRED kcm_shared_testbed\n"
    "    ENVIRONMENT \"KCM_TESTBED_DIR_EXISTING=${dir}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()
