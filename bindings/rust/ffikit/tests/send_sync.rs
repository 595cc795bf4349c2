//! The Send/Sync decisions of the crate docs, checked at compile time.
use ffikit::*;

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}

#[test]
fn handles_are_send_and_sync() {
    send_sync::<Any>();
    send_sync::<AnyView<'static>>();
    send_sync::<ObjectRef>();
    send_sync::<Str>();
    send_sync::<Bytes>();
    send_sync::<Shape>();
    send_sync::<Error>();
    send_sync::<Function>();
    send_sync::<Module>();
    send_sync::<Array<i64>>();
    send_sync::<Tuple>();
    send_sync::<Map<String, Any>>();
    send_sync::<List<Tensor>>();
    send_sync::<Dict<i64, List<i64>>>();
    send_sync::<Tensor>();
    send_sync::<AccessPath>();
    send_sync::<AccessStep>();
    send::<DLPack>();
}

#[test]
fn error_kinds_map_both_ways() {
    for name in ["RuntimeError", "ValueError", "TypeError", "IndexError", "KeyError", "MemoryError", "AttributeError", "NotImplementedError", "AssertionError"] {
        let k = ErrorKind::from_name(name);
        assert!(!matches!(k, ErrorKind::Other(_)), "{}", name);
        assert_eq!(k.name(), name);
    }
    assert_eq!(ErrorKind::from_name("x.Y").name(), "x.Y");
}
