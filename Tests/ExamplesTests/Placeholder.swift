import Testing

// Replaced by the tests of the module under test.
