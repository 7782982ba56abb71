/* Embeds the tokenizer tables (o200k_tables.bin, written into the build tree by
 * o200k_tables_gen from third_party/o200k/o200k_base.tiktoken after checking its SHA-256)
 * so a process maps them instead of parsing the vocabulary. The path is resolved through the
 * assembler include path (-Wa,-I<stream build dir>, set in stream/CMakeLists.txt). */
	.section .rodata.caveman_o200k_tables, "a", @progbits
	.balign 64
	.globl caveman_o200k_tables_begin
	.type caveman_o200k_tables_begin, @object
caveman_o200k_tables_begin:
	.incbin "o200k_tables.bin"
	.globl caveman_o200k_tables_end
	.type caveman_o200k_tables_end, @object
caveman_o200k_tables_end:
	.byte 0
	.section .note.GNU-stack, "", @progbits
