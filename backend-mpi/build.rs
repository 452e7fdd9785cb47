//! Compiles `src/shim.c` with the MPI's compiler wrapper: it supplies the
//! handles and constants that MPICH defines as macros and mpi-sys 0.2.4
//! does not export (`MPI_BYTE`, `MPI_PACKED`, `MPI_BOTTOM`, `MPI_IN_PLACE`,
//! error classes, combiners).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_owned());
    if Command::new(&mpicc).arg("-show").output().is_err() {
        panic!(
            "heisen-mpi needs an MPI C compiler wrapper (`{mpicc}` was not found). \
             Install MPICH (Debian: apt-get install mpich libmpich-dev libclang-dev clang) \
             or set MPICC to your MPI's mpicc; `scripts/test` installs them."
        );
    }
    cc::Build::new()
        .compiler(&mpicc)
        .file("src/shim.c")
        .warnings(true)
        .compile("heisen_mpi_shim");
}
