/*
 * serialization_yyjson.h - the one way containers/ includes the vendored yyjson (third_party/yyjson).
 *
 * Invariant: every yyjson symbol is hidden. yyjson marks its API with default visibility,
 * which would make libffikit.so export yyjson_* beside ffk_*; defining yyjson_api before
 * the header is included hides them, and the names below move them to ffk_yyjson__*, so two
 * copies of yyjson in one process or one static link (ours and an application's) never
 * bind to each other. serialization_yyjson.c compiles yyjson.c itself under the
 * same definitions. The JSON pointer / patch utilities are left out (unused).
 */
#ifndef FFIKIT_SERIALIZATION_YYJSON_H
#define FFIKIT_SERIALIZATION_YYJSON_H

#define yyjson_api __attribute__((visibility("hidden")))
#define YYJSON_DISABLE_UTILS 1

/* Every function yyjson.c defines, renamed into ffikit's private namespace: hidden symbols
   still bind across the objects of a static link, so libffikit.a must not define a
   yyjson_read_opts that would clash with an application's own yyjson. */
#define unsafe_yyjson_equals ffk_yyjson__unsafe_yyjson_equals
#define unsafe_yyjson_mut_equals ffk_yyjson__unsafe_yyjson_mut_equals
#define unsafe_yyjson_str_pool_grow ffk_yyjson__unsafe_yyjson_str_pool_grow
#define unsafe_yyjson_val_pool_grow ffk_yyjson__unsafe_yyjson_val_pool_grow
#define yyjson_alc_dyn_free ffk_yyjson__alc_dyn_free
#define yyjson_alc_dyn_new ffk_yyjson__alc_dyn_new
#define yyjson_alc_pool_init ffk_yyjson__alc_pool_init
#define yyjson_doc_mut_copy ffk_yyjson__doc_mut_copy
#define yyjson_locate_pos ffk_yyjson__locate_pos
#define yyjson_mut_doc_free ffk_yyjson__mut_doc_free
#define yyjson_mut_doc_imut_copy ffk_yyjson__mut_doc_imut_copy
#define yyjson_mut_doc_mut_copy ffk_yyjson__mut_doc_mut_copy
#define yyjson_mut_doc_new ffk_yyjson__mut_doc_new
#define yyjson_mut_doc_set_str_pool_size ffk_yyjson__mut_doc_set_str_pool_size
#define yyjson_mut_doc_set_val_pool_size ffk_yyjson__mut_doc_set_val_pool_size
#define yyjson_mut_val_imut_copy ffk_yyjson__mut_val_imut_copy
#define yyjson_mut_val_mut_copy ffk_yyjson__mut_val_mut_copy
#define yyjson_mut_val_write_file ffk_yyjson__mut_val_write_file
#define yyjson_mut_val_write_fp ffk_yyjson__mut_val_write_fp
#define yyjson_mut_val_write_opts ffk_yyjson__mut_val_write_opts
#define yyjson_mut_write_file ffk_yyjson__mut_write_file
#define yyjson_mut_write_fp ffk_yyjson__mut_write_fp
#define yyjson_mut_write_opts ffk_yyjson__mut_write_opts
#define yyjson_read_file ffk_yyjson__read_file
#define yyjson_read_fp ffk_yyjson__read_fp
#define yyjson_read_number ffk_yyjson__read_number
#define yyjson_read_opts ffk_yyjson__read_opts
#define yyjson_val_mut_copy ffk_yyjson__val_mut_copy
#define yyjson_val_write_file ffk_yyjson__val_write_file
#define yyjson_val_write_fp ffk_yyjson__val_write_fp
#define yyjson_val_write_opts ffk_yyjson__val_write_opts
#define yyjson_version ffk_yyjson__version
#define yyjson_write_file ffk_yyjson__write_file
#define yyjson_write_fp ffk_yyjson__write_fp
#define yyjson_write_opts ffk_yyjson__write_opts

#include <yyjson.h>

#endif /* FFIKIT_SERIALIZATION_YYJSON_H */
