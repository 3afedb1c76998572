// DocStoreTestSupport: helpers shared by the test targets and Fuzz/. Unstable API: only Tests/ and
// Fuzz/ may import it.
