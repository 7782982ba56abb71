# The public headers under the caveman/ prefix (issue 17). They stay where they are in the
# tree; the build links each one into ${CAVEMAN_INCLUDE_DIR}/caveman/<folder>/ at configure
# time and adds ${CAVEMAN_INCLUDE_DIR} as an include directory, so the project's own code
# includes them exactly as a consumer of the installed package does
# (#include "caveman/stream/status.h"), and a consumer's own stream/status.h cannot shadow
# them. Only these files are reachable under caveman/: nothing from internal/.
set(CAVEMAN_PUBLIC_HEADERS
  engine/engine.h
  store/store.h
  stream/byte_io.h
  stream/export.h
  stream/status.h
  stream/tokens.h)
set(CAVEMAN_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
foreach(header ${CAVEMAN_PUBLIC_HEADERS})
  get_filename_component(dir ${header} DIRECTORY)
  file(MAKE_DIRECTORY ${CAVEMAN_INCLUDE_DIR}/caveman/${dir})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${header} ${CAVEMAN_INCLUDE_DIR}/caveman/${header} SYMBOLIC)
endforeach()
# caveman/version.h: CAVEMAN_VERSION_MAJOR/MINOR/PATCH and CAVEMAN_VERSION_STRING, generated
# from project(VERSION) and installed beside the public headers.
configure_file(${PROJECT_SOURCE_DIR}/cmake/templates/version.h.in ${CAVEMAN_INCLUDE_DIR}/caveman/version.h @ONLY)
