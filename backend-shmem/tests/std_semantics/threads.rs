//! Threads (library/std/src/thread/tests.rs).

use super::*;

#[test]
fn thread_test_unnamed_thread() {
    setup();
    spawn(move || {
        assert!(thread::current().name().is_none());
    })
    .join()
    .expect("thread panicked");
}

#[test]
fn thread_test_named_thread() {
    setup();
    Builder::new()
        .name("ada lovelace".to_string())
        .spawn(move || {
            assert!(thread::current().name().unwrap() == "ada lovelace");
        })
        .unwrap()
        .join()
        .unwrap();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))] // as std's: glibc's pthread_getname_np
#[test]
fn thread_test_named_thread_truncation() {
    setup();
    use std::ffi::CStr;

    let long_name = std::iter::once("test_named_thread_truncation")
        .chain(std::iter::repeat_n(" yada", 100))
        .collect::<String>();

    let result = Builder::new().name(long_name.clone()).spawn(move || {
        // Rust remembers the full thread name itself.
        assert_eq!(thread::current().name(), Some(long_name.as_str()));

        // But the system is limited -- make sure we successfully set a truncation.
        let mut buf = vec![0u8; long_name.len() + 1];
        // SAFETY: `buf` is writable for `buf.len()` bytes.
        #[allow(unsafe_code)] // reason: std's test reads the kernel's name through libc
        unsafe {
            libc::pthread_getname_np(libc::pthread_self(), buf.as_mut_ptr().cast(), buf.len());
        }
        let cstr = CStr::from_bytes_until_nul(&buf).unwrap();
        assert!(!cstr.to_bytes().is_empty());
        assert!(long_name.as_bytes().starts_with(cstr.to_bytes()));
    });
    result.unwrap().join().unwrap();
}

#[test]
fn thread_test_invalid_named_thread() {
    setup();
    // std: `#[should_panic]`.
    let spawned = panic::catch_unwind(|| {
        let _ = Builder::new()
            .name("ada l\0velace".to_string())
            .spawn(|| {});
    });
    assert!(spawned.is_err(), "a name with a NUL must panic");
}

#[test]
fn thread_test_run_basic() {
    setup();
    let (tx, rx) = channel();
    spawn(move || {
        tx.send(()).unwrap();
    });
    rx.recv().unwrap();
}

#[test]
fn thread_test_is_finished() {
    setup();
    let b = Arc::new(Barrier::new(2));
    let t = spawn({
        let b = b.clone();
        move || {
            b.wait();
            1234
        }
    });

    // Thread is definitely running here, since it's still waiting for the barrier.
    assert!(!t.is_finished());

    // Unblock the barrier.
    b.wait();

    // Now check that t.is_finished() becomes true (std bounds the wait by
    // two seconds of wall clock; here it is only polled).
    while !t.is_finished() {
        thread::yield_now();
    }

    assert_eq!(t.join().unwrap(), 1234);
}

#[test]
fn thread_test_join_panic() {
    setup();
    match spawn(move || panic!()).join() {
        Err(_) => (),
        Ok(()) => panic!(),
    }
}

#[test]
fn thread_test_spawn_sched() {
    setup();
    let (tx, rx) = channel();

    fn f(i: i32, tx: Sender<()>) {
        let tx = tx.clone();
        spawn(move || {
            if i == 0 {
                tx.send(()).unwrap();
            } else {
                f(i - 1, tx);
            }
        });
    }
    f(10, tx);
    rx.recv().unwrap();
}

#[test]
fn thread_test_spawn_sched_childs_on_default_sched() {
    setup();
    let (tx, rx) = channel();

    spawn(move || {
        spawn(move || {
            tx.send(()).unwrap();
        });
    });

    rx.recv().unwrap();
}

fn avoid_copying_the_body<F>(spawnfn: F)
where
    F: FnOnce(Box<dyn Fn() + Send>),
{
    let (tx, rx) = channel();

    let x: Box<i32> = Box::new(1);
    let x_in_parent = (&raw const *x).addr();

    spawnfn(Box::new(move || {
        let x_in_child = (&raw const *x).addr();
        tx.send(x_in_child).unwrap();
    }));

    let x_in_child = rx.recv().unwrap();
    assert_eq!(x_in_parent, x_in_child);
}

#[test]
fn thread_test_avoid_copying_the_body_spawn() {
    setup();
    avoid_copying_the_body(|v| {
        spawn(move || v());
    });
}

#[test]
fn thread_test_avoid_copying_the_body_thread_spawn() {
    setup();
    avoid_copying_the_body(|f| {
        spawn(move || {
            f();
        });
    })
}

#[test]
fn thread_test_avoid_copying_the_body_join() {
    setup();
    avoid_copying_the_body(|f| {
        let _ = spawn(move || f()).join();
    })
}

#[test]
fn thread_test_child_doesnt_ref_parent() {
    setup();
    // If the child refcounts the parent thread, this will stack overflow when
    // climbing the thread tree to dereference each ancestor. (See #1789)
    const GENERATIONS: u32 = 16;
    fn child_no(x: u32) -> Box<dyn Fn() + Send> {
        Box::new(move || {
            if x < GENERATIONS {
                spawn(move || child_no(x + 1)());
            }
        })
    }
    spawn(|| child_no(0)());
}

#[test]
fn thread_test_simple_newsched_spawn() {
    setup();
    spawn(move || {});
}

#[test]
fn thread_test_try_panic_message_string_literal() {
    setup();
    match spawn(move || {
        panic!("static string");
    })
    .join()
    {
        Err(e) => {
            type T = &'static str;
            assert!(e.is::<T>());
            assert_eq!(*e.downcast::<T>().unwrap(), "static string");
        }
        Ok(()) => panic!(),
    }
}

#[test]
fn thread_test_try_panic_any_message_owned_str() {
    setup();
    match spawn(move || {
        panic_any("owned string".to_string());
    })
    .join()
    {
        Err(e) => {
            type T = String;
            assert!(e.is::<T>());
            assert_eq!(*e.downcast::<T>().unwrap(), "owned string".to_string());
        }
        Ok(()) => panic!(),
    }
}

#[test]
fn thread_test_try_panic_any_message_any() {
    setup();
    match spawn(move || {
        panic_any(Box::new(413u16) as Box<dyn Any + Send>);
    })
    .join()
    {
        Err(e) => {
            type T = Box<dyn Any + Send>;
            assert!(e.is::<T>());
            let any = e.downcast::<T>().unwrap();
            assert!(any.is::<u16>());
            assert_eq!(*any.downcast::<u16>().unwrap(), 413);
        }
        Ok(()) => panic!(),
    }
}

#[test]
fn thread_test_try_panic_any_message_unit_struct() {
    setup();
    struct Juju;

    match spawn(move || panic_any(Juju)).join() {
        Err(ref e) if e.is::<Juju>() => {}
        Err(_) | Ok(()) => panic!(),
    }
}

#[test]
fn thread_test_thread_id_not_equal() {
    setup();
    let spawned_id = spawn(|| thread::current().id()).join().unwrap();
    assert!(thread::current().id() != spawned_id);
}

#[test]
fn thread_test_scoped_threads_drop_result_before_join() {
    setup();
    let actually_finished = &AtomicBool::new(false);
    struct X<'scope, 'env>(&'scope Scope<'scope, 'env>, &'env AtomicBool);
    impl Drop for X<'_, '_> {
        fn drop(&mut self) {
            let actually_finished = self.1;
            self.0.spawn(move || {
                actually_finished.store(true, Ordering::Relaxed);
            });
        }
    }
    scope(|s| {
        s.spawn(move || X(s, actually_finished));
    });
    assert!(actually_finished.load(Ordering::Relaxed));
}

#[test]
fn thread_test_scoped_threads_nll() {
    setup();
    // this is mostly a *compilation test* for this exact function:
    fn foo(x: &u8) {
        scope(|s| {
            s.spawn(|| {
                let _ = x;
            });
        });
    }
    // let's also run it for good measure
    let x = 42_u8;
    foo(&x);
}

/// std runs this on Windows only; `stack_size(1)` is rounded up to the
/// system's minimum everywhere.
#[test]
fn thread_test_minimal_thread_stack() {
    setup();
    static COUNT: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

    let builder = Builder::new().stack_size(1);
    let before = builder
        .spawn(|| COUNT.fetch_add(1, Ordering::Relaxed))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(before, 0);
    assert_eq!(COUNT.load(Ordering::Relaxed), 1);
}
