/*
 * ffikit/error.h - error objects and the thread-local error slot.
 *
 * A fallible function returns -1 (or NULL) and leaves an Error object in the calling
 * thread's slot. An Error has a kind ("TypeError", "ValueError", ... or any name a
 * library chooses), a message, and a backtrace: the native frames captured where it
 * was raised (innermost first), followed by frames appended as the error crosses
 * calls and languages. Kinds are plain names: two errors are of one kind when the
 * names are equal.
 *
 * The slot holds at most one error; raising while one is pending replaces it.
 *
 * Threads: an Error is an object like any other and may be shared by threads (a Rust
 * closure returning a clone of an error it received). Its kind, message and native frames
 * never change. Frames may be appended from any thread while others read the backtrace
 * (ffk_error_backtrace, ffk_error_frames): each Error has its own lock around its frames.
 * A backtrace text, once returned, is never changed or freed while the Error lives: an
 * append makes the next ffk_error_backtrace build a new text and keeps the old one, so a
 * pointer a thread holds stays valid until the Error's last reference is released. We
 * keep the borrowed `const char *` (rather than returning a new String each call) because
 * every caller copies the text at once and a String per read would cost an allocation and
 * a release at every call site; the price is memory: a text is kept per request that
 * follows an append, freed with the Error. The payload is set by the thread holding the
 * Error before it shares it (ffk_error_set_payload).
 */
#ifndef FFIKIT_ERROR_H
#define FFIKIT_ERROR_H

#include <stdarg.h>

#include <ffikit/object.h>

FFK_EXTERN_C_BEGIN

/* The kinds ffikit itself raises, and that bindings map to their own exceptions. */
#define FFK_ERR_RUNTIME "RuntimeError"
#define FFK_ERR_VALUE "ValueError"
#define FFK_ERR_TYPE "TypeError"
#define FFK_ERR_INDEX "IndexError"
#define FFK_ERR_KEY "KeyError"
#define FFK_ERR_MEMORY "MemoryError"
#define FFK_ERR_ATTRIBUTE "AttributeError"
#define FFK_ERR_NOT_IMPLEMENTED "NotImplementedError"
#define FFK_ERR_ASSERTION "AssertionError"
#define FFK_ERR_OVERFLOW "OverflowError"       /* a value outside the range its destination holds */
#define FFK_ERR_FILE_NOT_FOUND "FileNotFoundError" /* a named resource (shared memory, library) is missing */

typedef struct ffk_error ffk_error;

/*
 * Raises an error of `kind` with a printf-style message and stores it in the thread's
 * slot (replacing any pending one). The first backtrace frame names the raising C
 * function, file and line (ffk_error_set is a macro that passes __func__, __FILE__ and
 * __LINE__ to ffk_error_set_at); the native call stack follows when capture is on.
 * Always returns -1, so `return ffk_error_set(FFK_ERR_VALUE, "...", x);` reads well.
 * If the error object cannot be allocated, the slot gets a preallocated MemoryError.
 * A NULL kind is taken as RuntimeError, a NULL fmt as an empty message.
 */
FFK_API int ffk_error_set_at(const char *file, int line, const char *func, const char *kind, const char *fmt, ...)
    FFK_PRINTF(5, 6);

/* ffk_error_set_at with a va_list. Always returns -1. */
FFK_API int ffk_error_setv_at(const char *file, int line, const char *func, const char *kind, const char *fmt,
                              va_list ap);

/* ffk_error_set as a function, for callers that cannot use the macro (other languages). */
FFK_API int ffk_error_set(const char *kind, const char *fmt, ...) FFK_PRINTF(2, 3);

#define ffk_error_set(kind, ...) ffk_error_set_at(__FILE__, __LINE__, __func__, (kind), __VA_ARGS__)

/*
 * A new Error object without raising it (no backtrace is captured: frames come from
 * ffk_error_append_frame). Returns a new reference, or NULL with a MemoryError.
 */
FFK_API ffk_error *ffk_error_new(const char *kind, const char *message);

/* True when the calling thread has a pending error. Cannot fail. */
FFK_API bool ffk_error_occurred(void);

/* The pending error of this thread, borrowed from the slot (valid until it changes), or NULL. */
FFK_API ffk_error *ffk_error_peek_borrow(void);

/* Moves the pending error out of the slot: a new reference (the slot is emptied), or NULL. */
FFK_API ffk_error *ffk_error_fetch(void);

/* Puts `err` in the slot (steals it), replacing any pending error. NULL clears the slot. */
FFK_API void ffk_error_restore(ffk_error *err);

/* Drops the pending error, if any. */
FFK_API void ffk_error_clear(void);

/* True when the pending error's kind is `kind` (false when there is none). Cannot fail. */
FFK_API bool ffk_error_matches(const char *kind);

/* The kind of an error ("ValueError"). Borrowed from `err`. */
FFK_API const char *ffk_error_kind(const ffk_error *err);

/* The message of an error. Borrowed from `err`. */
FFK_API const char *ffk_error_message(const ffk_error *err);

/*
 * The backtrace as text, one frame a line, innermost first: the symbolised native
 * frames captured when it was raised, then the frames appended so far. Borrowed from
 * `err` and valid until `err` is freed: later appends (from any thread) never change or
 * free a text already returned; the next call returns a new text with them. Thread-safe.
 * Returns "" if the text cannot be built (out of memory; the pending error, if any, is
 * left as it was). Never fails otherwise.
 */
FFK_API const char *ffk_error_backtrace(ffk_error *err);

/*
 * The backtrace without the native frames: the raising location line (when raised by
 * ffk_error_set) followed by the appended frames, innermost first, as
 * ffk_error_backtrace prints them. Cheap (no symbol lookup), for bindings that turn the
 * frames into their own traceback entries. Writes at most cap bytes into buf
 * (NUL-terminated, truncated; buf may be NULL with cap 0) and sets *len to the full
 * length, so a caller can size a buffer and ask again (frames appended by another
 * thread in between make *len larger the second time: the text stays whole lines up to
 * the truncation). Thread-safe. Returns 0, or -1 with a ValueError for a NULL err or len.
 */
FFK_API int ffk_error_frames(ffk_error *err, char *buf, size_t cap, size_t *len);

/*
 * Appends one frame (a line of text such as `File "x.py", line 3, in f`) to the
 * backtrace, as an error crosses a call or a language boundary. `frame` is borrowed
 * (copied). Any thread holding a reference may append, while others read; appends from
 * several threads are kept whole, in the order they took the Error's lock. Texts returned
 * earlier by ffk_error_backtrace stay valid. Returns 0 (the pending error, if any, is
 * left as it was), or -1 with a MemoryError in the slot (err is unchanged) or a
 * ValueError (err or frame NULL).
 */
FFK_API int ffk_error_append_frame(ffk_error *err, const char *frame);

/*
 * Attaches `payload` (borrowed: the error keeps its own reference) to `err`, replacing
 * and releasing an earlier one; NULL detaches. Bindings keep their own error value here
 * (the Python exception a callback raised) so that it comes back as the very same
 * value when the error returns to that language. The preallocated out-of-memory Error
 * takes no payload (the call succeeds and keeps nothing). Only the thread holding `err`
 * may call this. Returns 0, or -1 with a ValueError for a NULL err.
 */
FFK_API int ffk_error_set_payload(ffk_error *err, ffk_object *payload);

/* The payload of `err` (NULL when none or err is NULL), borrowed from `err` until it changes. */
FFK_API ffk_object *ffk_error_payload_borrow(const ffk_error *err);

/*
 * Turns native backtrace capture on or off for the whole process (on by default; the
 * environment variable FFK_BACKTRACE=0 turns it off at start). Returns the previous
 * setting. Capturing costs a few microseconds per raised error.
 */
FFK_API bool ffk_error_set_backtrace_enabled(bool enabled);

FFK_EXTERN_C_END

#endif /* FFIKIT_ERROR_H */
