# Third-party libraries, linked shared or static per final binary (issue 19: small-input
# fixed cost). Every folder links a caveman_tp_<name> INTERFACE target instead of the
# pkg-config / find_package target directly. For a binary whose CAVEMAN_STATIC_THIRD_PARTY
# property is ON (the CLI, cli/CMakeLists.txt) the target resolves to the library's static
# archives from the Debian -dev package; for every other consumer (the libraries' own
# compilation, libcaveman_engine.so, the tests) it resolves to the shared target, which also
# carries the include directories the libraries compile with. Only final binaries set the
# property, and they compile nothing that includes a third-party header.
#
# Why: the dynamic loader mapping and relocating a dozen shared libraries was a measurable part
# of a 4 KiB `compress` (docs/PERFORMANCE.md, "Small inputs"). Static archives are only used
# when every one of them exists; otherwise the CLI links the shared libraries as before.
#
# caveman_third_party(<name> SHARED <target> STATIC <archive file names...> [SYSTEM <libs...>])
#   SYSTEM: what the archives need after them that the toolchain links dynamically anyway
#   (libm, libdl, pthread).
set(CAVEMAN_STATIC_THIRD_PARTY_OK TRUE CACHE INTERNAL "")
set(CAVEMAN_STATIC_THIRD_PARTY_MISSING "" CACHE INTERNAL "")
set(_caveman_static "$<BOOL:$<TARGET_PROPERTY:CAVEMAN_STATIC_THIRD_PARTY>>")

function(caveman_third_party name)
  cmake_parse_arguments(ARG "" "SHARED" "STATIC;SYSTEM" ${ARGN})
  set(archives "")
  foreach(file ${ARG_STATIC})
    string(MAKE_C_IDENTIFIER "CAVEMAN_ARCHIVE_${file}" var)
    find_library(${var} NAMES ${file} NAMES_PER_DIR)
    if(${var})
      list(APPEND archives ${${var}})
    else()
      set(CAVEMAN_STATIC_THIRD_PARTY_OK FALSE CACHE INTERNAL "")
      set(CAVEMAN_STATIC_THIRD_PARTY_MISSING "${CAVEMAN_STATIC_THIRD_PARTY_MISSING} ${file}" CACHE INTERNAL "")
    endif()
  endforeach()
  add_library(caveman_tp_${name} INTERFACE)
  target_link_libraries(caveman_tp_${name} INTERFACE "$<$<NOT:${_caveman_static}>:${ARG_SHARED}>")
  if(archives)
    foreach(a ${archives} ${ARG_SYSTEM})
      target_link_libraries(caveman_tp_${name} INTERFACE "$<${_caveman_static}:${a}>")
    endforeach()
  endif()
endfunction()

# caveman_static_third_party(<target>): link <target> against the static archives (if all of
# them were found).
function(caveman_static_third_party target)
  if(CAVEMAN_STATIC_THIRD_PARTY_OK)
    set_property(TARGET ${target} PROPERTY CAVEMAN_STATIC_THIRD_PARTY ON)
    message(STATUS "${target}: third-party libraries linked statically")
  else()
    message(STATUS "${target}: linked against shared libraries (no static archive:${CAVEMAN_STATIC_THIRD_PARTY_MISSING})")
  endif()
endfunction()
