# Helpers shared by every folder.
# caveman_test(<path/to/foo_test.cc> LIBS <libs...>) adds one GoogleTest binary and registers
# its tests with ctest (one ctest entry per TEST, so the summary line counts real tests).
include(GoogleTest)
function(caveman_test src)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} caveman_testing GTest::gtest_main caveman_warnings)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  gtest_discover_tests(${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES ENVIRONMENT "CAVEMAN_SOURCE_DIR=${PROJECT_SOURCE_DIR};CAVEMAN_BINARY_DIR=${PROJECT_BINARY_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()

function(caveman_benchmark src)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} benchmark::benchmark caveman_warnings)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE CAVEMAN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endfunction()
