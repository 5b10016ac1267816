//! The `planrun` binary: builds the runtime, parses the command line, maps the outcome to an exit code.

use std::io::Write;

use planrun::cli;

fn main() {
    let args = match cli::with_default_command(std::env::args().collect()) {
        Ok(args) => args,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}\n  = help: `planrun --help` lists the subcommands");
            std::process::exit(cli::exit::BAD_INPUT);
        }
    };
    let cli = match cli::parse(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { cli::exit::BAD_INPUT } else { cli::exit::OK };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            // Nothing more can be done when stderr is gone too.
            let _ = writeln!(std::io::stderr(), "error: cannot start the runtime: {e}");
            std::process::exit(cli::exit::ABORTED);
        }
    };
    let code = runtime.block_on(cli::main(cli));
    std::process::exit(code);
}
