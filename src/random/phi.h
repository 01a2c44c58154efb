/* The phi input generator (tn_rand_phi) is test data of the application:
 * app/testmat/testdata.h. This header only forwards there for the GPU tests
 * (tests/gpu/test_gpu_ozaki.c) that still include it; the library does not
 * use it. */
#ifndef TCNLA_RANDOM_PHI_H
#define TCNLA_RANDOM_PHI_H
#include "testmat/testdata.h"
#endif
