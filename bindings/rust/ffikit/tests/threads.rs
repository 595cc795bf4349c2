//! 8 threads sharing one List / Dict (exact final counts) and one Array (clones unchanged).
use ffikit::{Array, Dict, List};
use std::thread;

const THREADS: i64 = 8;
const PER_THREAD: i64 = 2000;

#[test]
fn eight_threads_push_into_one_list() {
    let l: List<i64> = List::new().unwrap();
    thread::scope(|s| {
        for t in 0..THREADS {
            let l = l.clone();
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    l.push(t * PER_THREAD + i).unwrap();
                }
            });
        }
    });
    let mut all = l.to_vec().unwrap();
    assert_eq!(all.len() as i64, THREADS * PER_THREAD);
    all.sort_unstable();
    assert!(all.iter().enumerate().all(|(i, &v)| v == i as i64));
}

#[test]
fn eight_threads_update_one_dict() {
    let d: Dict<i64, i64> = Dict::new().unwrap();
    thread::scope(|s| {
        for t in 0..THREADS {
            let d = &d;
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    d.insert(t * PER_THREAD + i, t).unwrap(); // disjoint keys
                    d.insert(-1 - (i % 16), t).unwrap(); // 16 shared keys, overwritten
                    if i % 4 == 0 {
                        assert!(d.remove(&(t * PER_THREAD + i)).unwrap().is_some());
                    }
                }
            });
        }
    });
    let per_thread_left = PER_THREAD - PER_THREAD / 4;
    assert_eq!(d.len() as i64, THREADS * per_thread_left + 16);
    for t in 0..THREADS {
        assert_eq!(d.get(&(t * PER_THREAD + 1)).unwrap(), Some(t));
        assert_eq!(d.get(&(t * PER_THREAD)).unwrap(), None);
    }
}

#[test]
fn eight_threads_mutate_clones_of_one_array() {
    let base: Array<i64> = (0..100).collect();
    thread::scope(|s| {
        for t in 0..THREADS {
            let mut mine = base.clone(); // shared until the first write
            let base = &base;
            s.spawn(move || {
                for i in 0..PER_THREAD / 10 {
                    mine.push(t).unwrap();
                    mine.set(i % 100, -t).unwrap();
                    assert_eq!(base[(i % 100) as usize], i % 100); // the original never changes
                }
                assert_eq!(mine.len() as i64, 100 + PER_THREAD / 10);
            });
        }
    });
    assert_eq!(base.to_vec(), (0..100).collect::<Vec<_>>());
    assert_eq!(base.use_count(), 1);
}

#[test]
fn iterating_while_another_thread_appends_yields_values_or_an_error() {
    let l: List<i64> = (0..1000).collect();
    thread::scope(|s| {
        let writer = l.clone();
        s.spawn(move || {
            for i in 0..1000 {
                writer.push(i).unwrap();
            }
        });
        for _ in 0..20 {
            for item in &l {
                match item {
                    Ok(v) => assert!((0..1000).contains(&v)),
                    Err(e) => assert_eq!(e.to_string(), "RuntimeError: List changed during iteration"),
                }
            }
        }
    });
    assert_eq!(l.len(), 2000);
}

/// One thread extends by 1000 values at a time (more than the 256 the crate once gave C
/// per call) and rewrites slices; others read snapshots: each holds whole extends only.
#[test]
fn extend_and_slice_operations_are_atomic_for_readers() {
    const N: i64 = 1000;
    let l: List<i64> = List::new().unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|s| {
        for _ in 0..2 {
            let (l, done) = (l.clone(), &done);
            s.spawn(move || {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let v = l.to_vec().unwrap();
                    assert_eq!(v.len() as i64 % N, 0, "a reader saw part of an extend ({} values)", v.len());
                    let evens = l.slice(0, i64::MAX, 2).unwrap();
                    assert_eq!(evens.len() as i64 % (N / 2), 0, "a slice read saw part of an extend");
                    // Every element of a whole snapshot was written by one step: all equal in each block.
                    for block in v.chunks(N as usize) {
                        let (a, b) = (block[0], block[1]);
                        assert!(block.iter().step_by(2).all(|&x| x == a), "half an extended assignment (even positions)");
                        assert!(block.iter().skip(1).step_by(2).all(|&x| x == b), "half an extended assignment (odd positions)");
                    }
                }
            });
        }
        for round in 0..200i64 {
            l.try_extend(std::iter::repeat(round).take(N as usize)).unwrap();
            // Rewrite the even positions of the whole List in one step (a block keeps its pattern).
            let n = (l.len() as i64 + 1) / 2;
            l.set_slice(0, i64::MAX, 2, std::iter::repeat(-round).take(n as usize)).unwrap();
            if round % 4 == 3 {
                l.delete_slice(0, N, 1).unwrap();
            }
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}
