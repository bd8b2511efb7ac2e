# Prints the size of the shipped module, raw and gzipped (the size budget is tracked in bench/).
file(SIZE ${FILE} raw)
execute_process(COMMAND gzip -9c ${FILE} COMMAND wc -c OUTPUT_VARIABLE gz OUTPUT_STRIP_TRAILING_WHITESPACE)
get_filename_component(name ${FILE} NAME)
message(STATUS "${name}: ${raw} bytes, ${gz} bytes gzipped (wasm embedded)")
