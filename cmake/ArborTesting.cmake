# Helpers that register test executables with CTest.
#
# arbor_add_qt_test(NAME SOURCES ... [LIBS ...] [LABELS ...] [TIMEOUT s])
#   A Qt Test executable (the suites CI runs). Built only where Qt6::Test exists.
#   LIBS defaults to arbor_engine; name only the engine areas a suite needs (arbor_gguf...).
# arbor_add_plain_test(NAME SOURCES ... [LIBS ...] [LABELS ...] [TIMEOUT s] [ARGS ...])
#   A plain executable (GPU suites, anything that must build without Qt).
#
# Every test sees ARBOR_SHARED_DATA (../shared/data), ARBOR_SOURCE_DIR, ARBOR_BINARY_DIR and
# ARBOR_CLI (the arbor-cli binary); Qt tests run on the offscreen platform.

function(_arbor_test_env name)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
    "ARBOR_SHARED_DATA=${ARBOR_SHARED_DATA};ARBOR_SOURCE_DIR=${PROJECT_SOURCE_DIR};ARBOR_BINARY_DIR=${PROJECT_BINARY_DIR};ARBOR_CLI=$<TARGET_FILE:arbor-cli>;QT_QPA_PLATFORM=offscreen;ARBOR_PYTHON=/usr/bin/python3;ARBOR_SCREENSHOT_DIR=${PROJECT_BINARY_DIR}/screenshots")
endfunction()

function(arbor_add_qt_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  if(NOT TARGET Qt6::Test)
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  arbor_target_defaults(${name})
  # Every Qt Test suite declares a QObject and includes its .moc (QTEST_MAIN pattern).
  set_target_properties(${name} PROPERTIES AUTOMOC ON)
  if(NOT T_LIBS)
    set(T_LIBS arbor_engine)
  endif()
  target_link_libraries(${name} PRIVATE Qt6::Test ${T_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  target_compile_definitions(${name} PRIVATE ARBOR_TEST_DEFAULT_SHARED="${ARBOR_SHARED_DATA}")
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  _arbor_test_env(${name})
  if(T_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()

function(arbor_add_plain_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  arbor_target_defaults(${name})
  if(NOT T_LIBS)
    set(T_LIBS arbor_engine)
  endif()
  target_link_libraries(${name} PRIVATE ${T_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  target_compile_definitions(${name} PRIVATE ARBOR_TEST_DEFAULT_SHARED="${ARBOR_SHARED_DATA}")
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  _arbor_test_env(${name})
  if(T_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
