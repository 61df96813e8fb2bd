//! Judge: statistics, validity checks and the gate's verdict, computed from
//! recorded samples only (no measuring here, so all of it is unit-testable).
