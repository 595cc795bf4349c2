//! `Error` is an object handle like the others: downcasts, containers of errors, typed
//! Function parameters, and `Eq`/`Hash` that agree with C's (identity) and with `Any`'s.
mod common;
use ffikit::{Any, AnyView, Array, Error, Function, List, ObjectRef, ObjectType};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

fn hash_of<T: Hash>(x: &T) -> u64 {
    let mut h = DefaultHasher::new();
    x.hash(&mut h);
    h.finish()
}

#[test]
fn error_downcasts_from_an_object_and_from_a_value() {
    let e = Error::new("ValueError", "bad 1");
    let o: ObjectRef = e.clone().into();
    assert_eq!(o.type_name(), "Error");
    let back = o.clone().downcast::<Error>().unwrap();
    assert!(back.is(&e));
    assert_eq!(Error::TYPE_INDEX, ffikit::sys::ffk_type_index::FFK_TYPE_ERROR.0 as i32);
    assert_eq!(Error::try_from(o).unwrap(), e);
    let v = Any::from(&e);
    assert_eq!(v.kind(), ffikit::Kind::Error);
    assert!(v.to::<Error>().unwrap().is(&e));
    let not_error: ObjectRef = List::<i64>::new().unwrap().into();
    assert_eq!(not_error.downcast::<Error>().unwrap_err().to_string(), "TypeError: expected Error but got List");
    assert_eq!(Any::from(1i64).to::<Error>().unwrap_err().to_string(), "TypeError: expected Error but got int");
}

#[test]
fn arrays_and_lists_of_errors() {
    let (a, b) = (Error::new("KeyError", "k"), Error::new("IndexError", "i"));
    let arr: Array<Error> = vec![a.clone(), b.clone()].into();
    assert_eq!(arr.len(), 2);
    assert!(arr.get(0).unwrap().is(&a));
    assert!(arr[1].is(&b)); // lent straight out of the Array
    assert_eq!(arr.iter().map(|e| e.kind()).collect::<Vec<_>>(), vec!["KeyError", "IndexError"]);
    let l: List<Error> = List::new().unwrap();
    l.push(b.clone()).unwrap();
    l.try_extend([a.clone()]).unwrap();
    assert_eq!(l.to_vec().unwrap(), vec![b.clone(), a.clone()]);
    assert!(l.contains(&a));
    assert_eq!(a.as_object().use_count(), 3, "a, arr[0] and l[1]");
    let untyped: ObjectRef = Array::<Any>::from(vec![Any::from(&a), Any::from(2i64)]).into();
    assert_eq!(untyped.downcast::<Array<Error>>().unwrap_err().to_string(), "TypeError: Array item #1: expected Error but got int");
}

#[test]
fn error_equality_and_hash_are_identity_like_c() {
    let e = Error::new("ValueError", "same text");
    let twin = Error::new("ValueError", "same text");
    let alias = e.clone();
    assert_eq!(e, alias);
    assert_ne!(e, twin, "two errors made apart are two errors, as in C");
    assert_eq!(hash_of(&e), hash_of(&alias));
    // Consistent with the values holding them (C's structural equality and hash).
    assert_eq!(Any::from(&e) == Any::from(&twin), e == twin);
    assert_eq!(Any::from(&e) == Any::from(&alias), e == alias);
    assert_eq!(hash_of(&Any::from(&e)), hash_of(&e));
    let set: HashSet<Error> = [e.clone(), alias.clone(), twin.clone()].into_iter().collect();
    assert_eq!(set.len(), 2);
    assert!(set.contains(&e) && set.contains(&twin));
}

#[test]
fn typed_function_takes_and_returns_errors() {
    let wrap = Function::from_typed("rs.describe", |(e,): (Error,)| Ok(format!("{}", e))).unwrap();
    assert_eq!(wrap.signature().unwrap(), "rs.describe(0: Error) -> str");
    let e = Error::new("KeyError", "missing");
    assert_eq!(wrap.call(&[AnyView::from(&e)]).unwrap().as_str().unwrap(), "KeyError: missing");
    let err = wrap.call(&[AnyView::from(1i64)]).unwrap_err();
    assert!(err.message().contains("Expected `Error` but got `int`"), "{}", err.message());
    let same = Function::from_typed("rs.same", |(e,): (Error,)| Ok(e)).unwrap();
    assert!(same.call_typed::<_, Error>((e.clone(),)).unwrap().is(&e));
    // The testing module's echo hands the same object back.
    let echo = common::testing("echo");
    assert!(echo.call_typed::<_, Error>((e.clone(),)).unwrap().is(&e));
}
