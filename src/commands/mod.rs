//! One module per subcommand: each wires probe → plan → measure → judge →
//! report together and returns the process exit code.
