//! The one sentence each study's document keeps, beside the facts it
//! decided from: made here, from the decision, so that the study layer
//! never calls into the views, and a script reading the JSON gets the same
//! words the view opens with.

pub mod gate;
pub mod hybrid;
pub mod latency;
pub mod memory;
pub mod observe;
pub mod pairs;
pub mod sweep;
