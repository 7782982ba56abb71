/* Embeds the o200k_base vocabulary (third_party/o200k/o200k_base.tiktoken, MIT, see its
 * NOTICE) into the library so token counting needs no runtime file. The path is resolved
 * through the assembler include path (-Wa,-I<source root>, set in stream/CMakeLists.txt).
 * tokens.cc verifies the SHA-256 of these bytes before use. */
	.section .rodata.caveman_o200k, "a", @progbits
	.balign 64
	.globl caveman_o200k_vocab_begin
	.type caveman_o200k_vocab_begin, @object
caveman_o200k_vocab_begin:
	.incbin "third_party/o200k/o200k_base.tiktoken"
	.globl caveman_o200k_vocab_end
	.type caveman_o200k_vocab_end, @object
caveman_o200k_vocab_end:
	.byte 0
	.section .note.GNU-stack, "", @progbits
