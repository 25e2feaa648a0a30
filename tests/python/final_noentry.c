/* A shared object without cg_forward, for tests/python/test_final_ctypes.py. */
int cg_not_forward(void) { return 0; }
