// The target that builds tests/testing/test_pch.h; every opmap_test reuses its PCH.
int main() { return 0; }
