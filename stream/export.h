// CAVEMAN_EXPORT: marks the public API of libcaveman_engine.so (issue 17).
//
// The library's objects are compiled with -fvisibility=hidden -fvisibility-inlines-hidden
// (cmake/install.cmake), so only declarations carrying CAVEMAN_EXPORT — the classes and
// functions of the installed headers — are in the shared object's dynamic symbol table;
// tests/install/exported_symbols.sh compares that table with cmake/exported_symbols.txt.
// On a class it exports the out-of-line members, the vtable and the type_info (consumers
// derive from ByteSource, ByteSink, TokenCounter and RecoveryStore). The static library
// and the internal archives ignore it.
#ifndef CAVEMAN_STREAM_EXPORT_H_
#define CAVEMAN_STREAM_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define CAVEMAN_EXPORT [[gnu::visibility("default")]]
#else
#define CAVEMAN_EXPORT
#endif

#endif  // CAVEMAN_STREAM_EXPORT_H_
