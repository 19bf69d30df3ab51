# The runtime and libagora (issue 27), included from the top CMakeLists.txt.
#
# agora_runtime: runtime/*.c, the one composition root, archived for the binary and the library.
# agora_shared:  libagora.so.0 (lib/*.c over the runtime and the core), exporting only agora_* (lib/agora.map).
# agora_static:  libagora.a, the same objects archived (internal names included: prefer the shared library).
# Installed with include/agora.h, agora.pc and a CMake package (find_package(Agora) -> Agora::agora).

file(GLOB AGORA_RUNTIME_SOURCES CONFIGURE_DEPENDS runtime/*.c)
add_library(agora_runtime_obj OBJECT ${AGORA_RUNTIME_SOURCES})
target_link_libraries(agora_runtime_obj PUBLIC agora_core_obj)
target_compile_definitions(agora_runtime_obj PRIVATE AGORA_VERSION="${PROJECT_VERSION}")
add_library(agora_runtime STATIC $<TARGET_OBJECTS:agora_runtime_obj>)
target_link_libraries(agora_runtime PUBLIC agora_core)

file(GLOB AGORA_LIB_SOURCES CONFIGURE_DEPENDS lib/*.c)
set(AGORA_SOVERSION 0)
add_library(agora_lib_obj OBJECT ${AGORA_LIB_SOURCES})
target_include_directories(agora_lib_obj PUBLIC ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(agora_lib_obj PUBLIC agora_core_obj)
target_compile_definitions(agora_lib_obj PRIVATE AGORA_VERSION="${PROJECT_VERSION}")
target_compile_options(agora_lib_obj PRIVATE -fvisibility=hidden)

add_library(agora_shared SHARED $<TARGET_OBJECTS:agora_lib_obj>)
target_link_libraries(agora_shared PRIVATE agora_runtime agora_core)
target_include_directories(agora_shared PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_options(agora_shared PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/lib/agora.map -Wl,--no-undefined)
set_target_properties(agora_shared PROPERTIES OUTPUT_NAME agora VERSION ${PROJECT_VERSION} SOVERSION ${AGORA_SOVERSION}
                      EXPORT_NAME agora LINK_DEPENDS ${CMAKE_SOURCE_DIR}/lib/agora.map)

# The static library's dependencies, by name, for programs and for agora.pc's Libs.private.
set(AGORA_STATIC_LIBS event event_pthreads curl cjson lmdb nats ssl crypto m pthread)
add_library(agora_static STATIC $<TARGET_OBJECTS:agora_lib_obj> $<TARGET_OBJECTS:agora_runtime_obj>
                                $<TARGET_OBJECTS:agora_core_obj>)
target_include_directories(agora_static PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(agora_static INTERFACE ${AGORA_STATIC_LIBS})
set_target_properties(agora_static PROPERTIES OUTPUT_NAME agora EXPORT_NAME agora_static)

# pkg-config and the CMake package, filled for the prefix installed to.
string(REPLACE ";" " -l" AGORA_PC_PRIVATE "-l${AGORA_STATIC_LIBS}")
set(prefix "@prefix@") # kept for the install step, which knows the prefix
configure_file(${CMAKE_SOURCE_DIR}/dist/agora.pc.in ${CMAKE_BINARY_DIR}/agora.pc.in.cmake @ONLY)
unset(prefix)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/AgoraConfigVersion.cmake COMPATIBILITY SameMajorVersion)
file(WRITE ${CMAKE_BINARY_DIR}/AgoraConfig.cmake "include(\${CMAKE_CURRENT_LIST_DIR}/AgoraTargets.cmake)\n")

install(TARGETS agora_shared agora_static EXPORT AgoraTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES include/agora.h include/agora_db.h include/agora_server.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT AgoraTargets NAMESPACE Agora:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Agora)
install(FILES ${CMAKE_BINARY_DIR}/AgoraConfig.cmake ${CMAKE_BINARY_DIR}/AgoraConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Agora)
# agora.pc names the prefix actually installed to (cmake --install --prefix, or cpack's /usr).
install(CODE "set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(${CMAKE_BINARY_DIR}/agora.pc.in.cmake ${CMAKE_BINARY_DIR}/install-pc/agora.pc @ONLY)")
install(FILES ${CMAKE_BINARY_DIR}/install-pc/agora.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The symbol table check (only agora_* exported, the soname, the binary on the shared library).
add_test(NAME test_lib_symbols COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lib_symbols.sh $<TARGET_FILE:agora_shared>
                                       $<TARGET_FILE:agora>)
# examples/c/ against the installed library (pkg-config and find_package).
add_test(NAME test_lib_example COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lib_example.sh ${CMAKE_BINARY_DIR})
set_tests_properties(test_lib_example PROPERTIES TIMEOUT 600)
# The Python package (python/) with pytest from Debian's /usr/bin/python3 (python3-pytest), on the
# library just built; and `pip install` of it into a venv, offline.
# A sanitized libagora loaded by a program that is not (python3, the installed example) needs the ASan
# runtime first in the process: it is preloaded, and leak checking is left to the C tests (CPython's own
# allocations at exit are not leak-clean).
set(AGORA_PRELOAD_ENV "")
set(AGORA_PY_PRELOAD_ENV "")
if(AGORA_SANITIZE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so OUTPUT_VARIABLE AGORA_ASAN_RT
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(AGORA_PRELOAD_ENV "AGORA_PRELOAD=${AGORA_ASAN_RT};ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
  set(AGORA_PY_PRELOAD_ENV "LD_PRELOAD=${AGORA_ASAN_RT};ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
endif()
set_tests_properties(test_lib_example PROPERTIES ENVIRONMENT "${AGORA_PRELOAD_ENV}")
find_program(AGORA_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(AGORA_PYTHON3)
  add_test(NAME test_lib_python COMMAND ${AGORA_PYTHON3} -m pytest -q -p no:cacheprovider ${CMAKE_SOURCE_DIR}/python/tests)
  set_tests_properties(test_lib_python PROPERTIES TIMEOUT 600 ENVIRONMENT
    "AGORA_LIB=$<TARGET_FILE:agora_shared>;AGORA_BIN=$<TARGET_FILE:agora>;AGORA_TEST_SERVER=$<TARGET_FILE:agora-test-server>;PYTHONDONTWRITEBYTECODE=1;${AGORA_PY_PRELOAD_ENV}")
endif()
