# tessera_add_plugin(<target> SOURCES ...): a plugin is a MODULE library that includes only the
# plugin ABI header, exports only its entry point and lands in the plugin folder of the build tree.
function(tessera_add_plugin target)
  cmake_parse_arguments(P "" "OUTPUT_NAME" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE tessera_plugin_abi)
  if(NOT P_OUTPUT_NAME)
    set(P_OUTPUT_NAME ${target})
  endif()
  set_target_properties(${target} PROPERTIES
      OUTPUT_NAME ${P_OUTPUT_NAME}
      PREFIX "lib"
      LIBRARY_OUTPUT_DIRECTORY ${TESSERA_PLUGIN_OUTPUT_DIR})
  target_link_options(${target} PRIVATE
      "-Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/plugin.map" ${TESSERA_LINK_NO_UNDEFINED})
  install(TARGETS ${target} LIBRARY DESTINATION ${TESSERA_PLUGIN_INSTALL_DIR})
endfunction()
