# Writes OUTPUT: `kPresets`, one {name, json} entry per file in CONFIGS.
separate_arguments(CONFIGS)
set(body "// Generated from lib/Models/configs/*.json; do not edit.\n")
string(APPEND body "const Preset kPresets[] = {\n")
foreach(config ${CONFIGS})
  get_filename_component(name ${config} NAME_WE)
  # NAME_WE stops at the first dot ("qwen2.5-0.5b"): take the name by hand.
  get_filename_component(file ${config} NAME)
  string(REGEX REPLACE "\\.json$" "" name ${file})
  file(READ ${config} text)
  string(APPEND body "    {\"${name}\", R\"fbljson(${text})fbljson\"},\n")
endforeach()
string(APPEND body "};\n")
file(WRITE ${OUTPUT} "${body}")
