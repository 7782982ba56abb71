/* Embeds the Hyperscan pattern databases compiled at build time (hs_databases.bin, written into
 * the build tree by hs_db_gen; format in compressors/pattern_databases.h). The Engine registers
 * them with the compressors. The path is resolved through the assembler include path
 * (-Wa,-I<engine build dir>, set in engine/CMakeLists.txt). */
	.section .rodata.caveman_hs_databases, "a", @progbits
	.balign 64
	.globl caveman_hs_databases_begin
	.type caveman_hs_databases_begin, @object
caveman_hs_databases_begin:
	.incbin "hs_databases.bin"
	.globl caveman_hs_databases_end
	.type caveman_hs_databases_end, @object
caveman_hs_databases_end:
	.byte 0
	.section .note.GNU-stack, "", @progbits
