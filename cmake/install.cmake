# Installable library: libcaveman_engine.so (every internal static library linked whole, only
# caveman:: symbols exported), the public headers, a CMake package (find_package(caveman_engine)
# → caveman::engine) and a pkg-config file (caveman-engine). See docs/LIBRARY.md.
#
# Why one shared library: the engine links nine third-party libraries (Hyperscan, simdjson,
# SQLite, zstd, ...) and vendors tree-sitter grammars; a consumer of a static archive would have
# to find and link all of them in the right order. The shared object carries those links, and
# the version script keeps the vendored grammar symbols out of the consumer's namespace.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The installed headers are CAVEMAN_PUBLIC_HEADERS (cmake/public_headers.cmake): the public API
# and the headers it includes, nothing from internal/.

# The shared object is made of every object file of the internal archives (compiled once,
# position-independent); linking the archives as well brings their third-party libraries, and
# adds no code since every symbol is already defined by the objects.
set(CAVEMAN_LIBRARY_PARTS caveman_engine caveman_compressors caveman_store caveman_stream
    caveman_ts_grammars)
# Hidden visibility by default on every object of the library (issue 17): only declarations
# marked CAVEMAN_EXPORT (stream/export.h, the installed headers) are exported, checked against
# cmake/exported_symbols.txt by ctest (install.exported_symbols). The CLI and the tests link the
# archives statically, where visibility changes nothing.
set_target_properties(${CAVEMAN_LIBRARY_PARTS} PROPERTIES
  C_VISIBILITY_PRESET hidden
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
add_library(caveman_engine_shared SHARED)
foreach(part ${CAVEMAN_LIBRARY_PARTS})
  target_sources(caveman_engine_shared PRIVATE $<TARGET_OBJECTS:${part}>)
endforeach()
add_library(caveman::engine ALIAS caveman_engine_shared)
target_link_libraries(caveman_engine_shared PRIVATE caveman_engine)
target_link_options(caveman_engine_shared PRIVATE
  -Wl,--no-undefined
  -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/templates/caveman_engine.map)
set_target_properties(caveman_engine_shared PROPERTIES
  OUTPUT_NAME caveman_engine
  EXPORT_NAME engine
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/templates/caveman_engine.map
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
# The public headers need C++17 (std::variant, std::string_view); the library is built as C++20.
target_compile_features(caveman_engine_shared INTERFACE cxx_std_17)
# Only the include root: consumers write #include <caveman/engine/engine.h>, and their own
# stream/status.h (or any other generic path) never shadows ours.
target_include_directories(caveman_engine_shared INTERFACE
  $<BUILD_INTERFACE:${CAVEMAN_INCLUDE_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# The static library libcaveman_engine.a (caveman::engine_static, issue 17): the same objects
# in one archive. Its consumer links the third-party libraries itself; they are exported by
# their link names (as pkg-config reports them, e.g. hs, simdjson, sqlite3), so the package
# has no dependency on the targets of this build, and the vendored tree-sitter grammars come
# with the archive.
add_library(caveman_engine_static STATIC)
foreach(part ${CAVEMAN_LIBRARY_PARTS})
  target_sources(caveman_engine_static PRIVATE $<TARGET_OBJECTS:${part}>)
endforeach()
set(CAVEMAN_STATIC_DEPENDENCIES
  ${CAVEMAN_STORE_LIBPQ_LIBRARIES} ${CAVEMAN_STORE_SQLITE3_LIBRARIES} ${CAVEMAN_STORE_ZSTD_LIBRARIES}
  ${GUMBO_LIBRARIES} ${HYPERSCAN_LIBRARIES} ${PUGIXML_LIBRARIES} ${RE2_LIBRARIES}
  ${SIMDJSON_LIBRARIES} ${TREE_SITTER_LIBRARIES} ${YAML_CPP_LIBRARIES} ${ICU_UC_LIBRARIES}
  boost_iostreams crypto)
list(REMOVE_DUPLICATES CAVEMAN_STATIC_DEPENDENCIES)
target_link_libraries(caveman_engine_static INTERFACE ${CAVEMAN_STATIC_DEPENDENCIES} Threads::Threads)
target_compile_features(caveman_engine_static INTERFACE cxx_std_17)
target_include_directories(caveman_engine_static INTERFACE
  $<BUILD_INTERFACE:${CAVEMAN_INCLUDE_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(caveman_engine_static PROPERTIES
  OUTPUT_NAME caveman_engine
  EXPORT_NAME engine_static
  ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
add_library(caveman::engine_static ALIAS caveman_engine_static)

install(TARGETS caveman_engine_shared caveman_engine_static EXPORT caveman_engine_targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
foreach(header ${CAVEMAN_PUBLIC_HEADERS})
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/caveman/${dir} COMPONENT development)
endforeach()
install(FILES ${CAVEMAN_INCLUDE_DIR}/caveman/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/caveman
        COMPONENT development)

set(CAVEMAN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/caveman_engine)
install(EXPORT caveman_engine_targets NAMESPACE caveman:: FILE caveman_engine_targets.cmake
        DESTINATION ${CAVEMAN_CMAKE_DIR} COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/templates/caveman_engineConfig.cmake.in
  ${PROJECT_BINARY_DIR}/caveman_engineConfig.cmake INSTALL_DESTINATION ${CAVEMAN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/caveman_engineConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/caveman_engineConfig.cmake
              ${PROJECT_BINARY_DIR}/caveman_engineConfigVersion.cmake
        DESTINATION ${CAVEMAN_CMAKE_DIR} COMPONENT development)

# pkg-config: the prefix is found from the .pc file's own place, so `cmake --install --prefix`
# to any directory yields a working file.
file(RELATIVE_PATH CAVEMAN_PC_TO_PREFIX
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/templates/caveman-engine.pc.in
               ${PROJECT_BINARY_DIR}/caveman-engine.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/caveman-engine.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

# The library embeds the o200k_base vocabulary and the tree-sitter grammars: their notices go
# with it.
set(CAVEMAN_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/caveman-engine)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CAVEMAN_DOC_DIR} COMPONENT library)
install(FILES ${PROJECT_SOURCE_DIR}/third_party/o200k/NOTICE
        DESTINATION ${CAVEMAN_DOC_DIR}/o200k COMPONENT library)
foreach(grammar go java python typescript rust c cpp)
  install(FILES ${PROJECT_SOURCE_DIR}/third_party/tree-sitter-grammars/${grammar}/LICENSE
          DESTINATION ${CAVEMAN_DOC_DIR}/tree-sitter-${grammar} COMPONENT library)
endforeach()
