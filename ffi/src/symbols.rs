//! Function names for the `-finstrument-functions` hooks: an address seen
//! for the first time becomes the function's (demangled) name.
//!
//! 1. `dladdr`: exported symbols, when the symbol starts exactly at the
//!    address (otherwise `dladdr` names the nearest exported symbol before
//!    it, which is another function).
//! 2. The ELF symbol table (`.symtab`, then `.dynsym`) of the object the
//!    address lies in, read once per object: static functions and the
//!    functions of an executable that exports nothing.
//! 3. Otherwise `0x<offset>@<object>`.
//!
//! Position-independent executables and shared objects are loaded at a
//! bias, and their symbol values are relative to it; a classic executable
//! has bias 0 and absolute values. `dl_iterate_phdr` gives that bias
//! (`dlpi_addr`) for both, so `address - bias` is the symbol value in
//! either case. (`dladdr`'s `dli_fbase` is the lowest mapped address
//! instead, which is not the bias of a non-PIE executable.)

use core::ffi::{CStr, c_int, c_void};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use heisen_shmem::names::MAX_NAME_LEN;
use object::{Object, ObjectSymbol, SymbolKind};

/// The symbol tables read so far, per object path.
#[derive(Debug, Default)]
pub(crate) struct Symbols {
    objects: HashMap<PathBuf, Option<Table>>,
}

/// One object's function symbols, sorted by value.
#[derive(Debug)]
struct Table {
    /// The file, kept mapped: names are read from its string tables.
    map: memmap2::Mmap,
    /// `(value, size, name offset in the file, name length)`.
    functions: Vec<(u64, u64, usize, usize)>,
}

impl Table {
    fn read(path: &Path) -> Option<Table> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: the object is mapped read-only and only read; a file
        // replaced on disk while the process runs would be read as it is
        // now, which at worst names a function wrongly.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let base = map.as_ptr() as usize;
        let mut functions = Vec::new();
        {
            let object = object::File::parse(&*map).ok()?;
            for symbol in object.symbols().chain(object.dynamic_symbols()) {
                if symbol.kind() != SymbolKind::Text || symbol.address() == 0 {
                    continue;
                }
                let Ok(name) = symbol.name_bytes() else {
                    continue;
                };
                let offset = (name.as_ptr() as usize).wrapping_sub(base);
                if name.is_empty() || offset + name.len() > map.len() {
                    continue;
                }
                functions.push((symbol.address(), symbol.size(), offset, name.len()));
            }
        }
        functions.sort_unstable();
        functions.dedup_by_key(|f| f.0);
        Some(Table { map, functions })
    }

    /// The name of the function at symbol value `value`: one that starts
    /// there, else one that contains it.
    fn name_at(&self, value: u64) -> Option<&[u8]> {
        let i = self.functions.partition_point(|f| f.0 <= value);
        let &(start, size, offset, len) = self.functions.get(i.checked_sub(1)?)?;
        (start == value || value < start + size).then(|| &self.map[offset..offset + len])
    }
}

/// What the dynamic loader says of an address ([`locate`]).
#[derive(Debug)]
pub(crate) enum Place {
    /// An exported symbol starts there: its readable name.
    Exported(String),
    /// In the object of this file, loaded at this bias.
    Object(u64, PathBuf),
    /// In no loaded object.
    Nowhere,
}

/// Asks the dynamic loader about `address` (`dladdr`, `dl_iterate_phdr`,
/// both of which take the loader's lock): call it holding none of
/// heisen's locks, since a thread running an object's constructors holds
/// the loader's lock and may be waiting for one of them.
pub(crate) fn locate(address: usize) -> Place {
    if let Some(name) = exported(address) {
        return Place::Exported(name);
    }
    match object_of(address) {
        Some((bias, path)) => Place::Object(bias, path),
        None => Place::Nowhere,
    }
}

impl Symbols {
    /// The name of the function at `address`, which [`locate`] placed
    /// (see the module docs); reads the object's symbol table, without
    /// the loader.
    pub(crate) fn name_of(&mut self, address: usize, place: Place) -> String {
        let (bias, path) = match place {
            Place::Exported(name) => return name,
            Place::Object(bias, path) => (bias, path),
            Place::Nowhere => return format!("{address:#x}@?"),
        };
        let value = (address as u64).wrapping_sub(bias);
        let table = self
            .objects
            .entry(path.clone())
            .or_insert_with(|| Table::read(&path));
        if let Some(name) = table.as_ref().and_then(|t| t.name_at(value)) {
            return readable(name);
        }
        let object = std::fs::read_link(&path).unwrap_or(path);
        let object = object
            .file_name()
            .map_or_else(|| "?".into(), |n| n.to_string_lossy());
        format!("{value:#x}@{object}")
    }
}

/// The address ranges and files of the objects loaded at one moment.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The `PT_LOAD` segments' `[start, end)`.
    ranges: Vec<(u64, u64)>,
    paths: Vec<PathBuf>,
}

impl Loaded {
    /// The objects loaded now (`dl_iterate_phdr`).
    pub(crate) fn now() -> Loaded {
        Loaded::now_with(|_| true)
    }

    /// The objects loaded now that `pick` picks.
    fn now_with(pick: impl Fn(&libc::dl_phdr_info) -> bool) -> Loaded {
        struct Walk<'a> {
            loaded: Loaded,
            pick: &'a dyn Fn(&libc::dl_phdr_info) -> bool,
        }
        unsafe extern "C" fn visit(
            info: *mut libc::dl_phdr_info,
            _size: usize,
            data: *mut c_void,
        ) -> c_int {
            // SAFETY: dl_iterate_phdr passes a valid info, and `data` is
            // the `Walk` below, alive for the whole iteration.
            let (info, walk) = unsafe { (&*info, &mut *data.cast::<Walk>()) };
            if !(walk.pick)(info) {
                return 0;
            }
            let loaded = &mut walk.loaded;
            for h in headers(info) {
                if h.p_type == libc::PT_LOAD {
                    let start = info.dlpi_addr.wrapping_add(h.p_vaddr);
                    loaded.ranges.push((start, start.wrapping_add(h.p_memsz)));
                }
            }
            loaded.paths.push(path_of(info));
            0
        }
        let mut walk = Walk {
            loaded: Loaded {
                ranges: Vec::new(),
                paths: Vec::new(),
            },
            pick: &pick,
        };
        // SAFETY: `visit` matches the callback type and only touches `walk`.
        unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut walk).cast()) };
        walk.loaded
    }

    /// The object `handle` (one `dlopen` returned) is, unless it is the
    /// main program (which is never unloaded): `None` if the loader does
    /// not know the handle.
    pub(crate) fn of_handle(handle: *mut c_void) -> Option<Loaded> {
        /// The start of glibc's `struct link_map` (`<link.h>`, public).
        #[repr(C)]
        struct LinkMap {
            l_addr: u64,
            l_name: *const core::ffi::c_char,
        }
        if handle.is_null() {
            return None;
        }
        let mut map: *const LinkMap = core::ptr::null();
        // SAFETY: dlinfo writes the handle's link map pointer to `map`.
        let rc = unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&raw mut map).cast()) };
        if rc != 0 || map.is_null() {
            return None;
        }
        // SAFETY: the loader's link map of a loaded object; its name is a
        // NUL-terminated string of the loader, alive while it is loaded.
        let (bias, name) = unsafe {
            let map = &*map;
            if map.l_name.is_null() {
                return None;
            }
            (map.l_addr, CStr::from_ptr(map.l_name).to_bytes().to_vec())
        };
        if name.is_empty() {
            return None;
        }
        let path = PathBuf::from(String::from_utf8_lossy(&name).into_owned());
        let all = Loaded::now_with(|info| info.dlpi_addr == bias && path_of(info) == path);
        (!all.ranges.is_empty()).then_some(all)
    }

    /// Whether `address` lies in a loaded object.
    pub(crate) fn contains(&self, address: usize) -> bool {
        let a = address as u64;
        self.ranges
            .iter()
            .any(|&(start, end)| (start..end).contains(&a))
    }
}

/// How many objects the process has unloaded so far (the loader's count,
/// `dlpi_subs`): a `dlclose` that leaves it unchanged unloaded nothing.
pub(crate) fn unloads() -> u64 {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info of `size` bytes, and
        // `data` is the `u64` below, alive for the whole iteration.
        let (info, subs) = unsafe { (&*info, &mut *data.cast::<u64>()) };
        if size >= core::mem::size_of::<libc::dl_phdr_info>() {
            *subs = info.dlpi_subs;
        }
        1 // every object carries the same count: the first will do
    }
    let mut subs = 0u64;
    // SAFETY: `visit` matches the callback type and only touches `subs`.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut subs).cast()) };
    subs
}

impl Symbols {
    /// Drops the symbol tables of files no longer loaded: a file loaded
    /// again later may have been rebuilt.
    pub(crate) fn retain(&mut self, loaded: &Loaded) {
        self.objects.retain(|path, _| loaded.paths.contains(path));
    }
}

/// An object's program headers.
fn headers(info: &libc::dl_phdr_info) -> &[libc::Elf64_Phdr] {
    if info.dlpi_phdr.is_null() {
        &[]
    } else {
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers, alive
        // during the callback that got `info`.
        unsafe { core::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
    }
}

/// An object's file: its name, `/proc/self/exe` for the main program
/// (whose name is empty).
fn path_of(info: &libc::dl_phdr_info) -> PathBuf {
    let name = if info.dlpi_name.is_null() {
        &[][..]
    } else {
        // SAFETY: dlpi_name is a NUL-terminated string of the loader.
        unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes()
    };
    if name.is_empty() {
        PathBuf::from("/proc/self/exe")
    } else {
        PathBuf::from(String::from_utf8_lossy(name).into_owned())
    }
}

/// The name `dladdr` gives if an exported symbol starts at `address`.
fn exported(address: usize) -> Option<String> {
    let mut info = libc::Dl_info {
        dli_fname: core::ptr::null(),
        dli_fbase: core::ptr::null_mut(),
        dli_sname: core::ptr::null(),
        dli_saddr: core::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and writes `info`.
    let found = unsafe { libc::dladdr(address as *const c_void, &raw mut info) };
    if found == 0 || info.dli_sname.is_null() || info.dli_saddr as usize != address {
        return None;
    }
    // SAFETY: a non-null dli_sname is a NUL-terminated string owned by the
    // dynamic linker, alive while the object is loaded.
    let name = unsafe { CStr::from_ptr(info.dli_sname) };
    Some(readable(name.to_bytes()))
}

/// The load bias and file of the loaded object whose segments contain
/// `address`.
fn object_of(address: usize) -> Option<(u64, PathBuf)> {
    struct Search {
        address: u64,
        found: Option<(u64, PathBuf)>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info, and `data` is the
        // `Search` below, alive for the whole iteration.
        let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
        let inside = headers(info).iter().any(|h| {
            let start = info.dlpi_addr.wrapping_add(h.p_vaddr);
            h.p_type == libc::PT_LOAD && (start..start + h.p_memsz).contains(&search.address)
        });
        if !inside {
            return 0;
        }
        search.found = Some((info.dlpi_addr, path_of(info)));
        1
    }
    let mut search = Search {
        address: address as u64,
        found: None,
    };
    // SAFETY: `visit` matches the callback type and only touches `search`.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut search).cast()) };
    search.found
}

/// A symbol as a region name: demangled if it is a C++ name or a
/// gfortran module procedure, at most [`MAX_NAME_LEN`] bytes.
fn readable(symbol: &[u8]) -> String {
    let mut name = if symbol.starts_with(b"_Z") {
        cpp_demangle::Symbol::new(symbol)
            .ok()
            .and_then(|s| s.demangle().ok())
            .unwrap_or_else(|| String::from_utf8_lossy(symbol).into_owned())
    } else {
        let raw = String::from_utf8_lossy(symbol);
        fortran_module_procedure(&raw).unwrap_or_else(|| raw.into_owned())
    };
    if name.len() > MAX_NAME_LEN {
        let mut end = MAX_NAME_LEN;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

/// gfortran's name for procedure `p` of module `m`, `__m_MOD_p`, as
/// `m::p` (the form Fortran tools show), a compiler clone's suffix kept
/// (`__m_MOD_p.constprop.0` is `m::p.constprop.0`); `None` for any other
/// symbol.
fn fortran_module_procedure(symbol: &str) -> Option<String> {
    let (module, procedure) = symbol.strip_prefix("__")?.split_once("_MOD_")?;
    let base = procedure.split('.').next().unwrap_or(procedure);
    let clone = &procedure[base.len()..];
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    (word(module) && word(base)).then(|| format!("{module}::{base}{clone}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfortran_module_procedures_are_named_module_colon_colon_procedure() {
        assert_eq!(readable(b"__work_MOD_fib"), "work::fib");
        assert_eq!(readable(b"__my_mod_MOD_do_it"), "my_mod::do_it");
        assert_eq!(
            readable(b"__work_MOD_fib.constprop.0"),
            "work::fib.constprop.0"
        );
        // The main program and ordinary symbols are kept.
        assert_eq!(readable(b"MAIN__"), "MAIN__");
        assert_eq!(readable(b"__libc_start_main"), "__libc_start_main");
        assert_eq!(readable(b"___MOD_x"), "___MOD_x");
    }

    #[test]
    fn cpp_names_are_demangled_and_c_names_kept() {
        assert_eq!(readable(b"_ZN3foo3barEv"), "foo::bar()");
        assert_eq!(readable(b"solve"), "solve");
        // Not a valid mangling: kept as it is.
        assert_eq!(readable(b"_Zgarbage"), "_Zgarbage");
        assert_eq!(readable(&[b'x'; 5000]).len(), MAX_NAME_LEN);
    }

    #[inline(never)]
    extern "C" fn a_local_function() -> u32 {
        7
    }

    #[test]
    fn an_address_of_this_test_binary_resolves_to_its_symbol() {
        let mut symbols = Symbols::default();
        let address = a_local_function as extern "C" fn() -> u32 as usize;
        let name = symbols.name_of(address, locate(address));
        // Rust symbols are not C++ manglings: the raw symbol contains the path.
        assert!(name.contains("a_local_function"), "{name}");
    }

    #[test]
    fn an_address_in_no_object_is_named_by_its_address() {
        let mut symbols = Symbols::default();
        assert_eq!(symbols.name_of(0x10, locate(0x10)), "0x10@?");
    }
}
