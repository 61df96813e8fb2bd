//! TODO(skeleton)
