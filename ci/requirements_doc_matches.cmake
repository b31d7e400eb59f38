# docs/requirements.md is `attnv requirements --markdown`, the table derived from the registry
# (properties/requirements/): fails when a requirement changed and the doc was not regenerated.
# Regenerate: build/release/cli/attnv requirements --markdown > docs/requirements.md
execute_process(COMMAND ${ATTNV} requirements --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "attnv requirements --markdown exited ${rc}")
endif()
file(READ ${SOURCE_DIR}/docs/requirements.md doc)
if(NOT doc STREQUAL generated)
  message(FATAL_ERROR "docs/requirements.md differs from `attnv requirements --markdown`; regenerate it:\n"
                      "  attnv requirements --markdown > docs/requirements.md")
endif()
