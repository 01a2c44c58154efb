/* Handles, status text, memory helpers, method names, settings. */
#include "tcnla.h"
#include "test.h"

#include <string.h>

TEST(api_create_cpu_and_destroy) {
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == TCNLA_SUCCESS);
    tcnla_backend_t b;
    CHECK(tcnla_get_backend(h, &b) == 0 && b == TCNLA_BACKEND_CPU);
    char name[64];
    CHECK(tcnla_device_name(h, name, sizeof name) == 0 && strcmp(name, "CPU") == 0);
    CHECK(tcnla_set_stream(h, NULL) == TCNLA_ERR_NOT_SUPPORTED);
    CHECK(tcnla_synchronize(h) == 0);
    CHECK(tcnla_destroy(h) == 0);
    CHECK(tcnla_destroy(NULL) == 0);
}

TEST(api_create_invalid_arguments) {
    tcnla_handle_t h = (tcnla_handle_t)1;
    CHECK_EQ_INT(tcnla_create(NULL, TCNLA_BACKEND_CPU), -1);
    CHECK_EQ_INT(tcnla_create(&h, (tcnla_backend_t)7), -2);
    CHECK(h == NULL);
    CHECK_EQ_INT(tcnla_get_backend(NULL, NULL), -1);
    CHECK_EQ_INT(tcnla_device_name(NULL, NULL, 0), -1);
}

TEST(api_auto_backend_follows_gpu_presence) {
    int compiled = -1, ngpu = -1;
    CHECK(tcnla_cuda_available(&compiled, &ngpu) == 0);
    CHECK(compiled == 0 || compiled == 1);
    CHECK(ngpu >= 0);
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_AUTO) == 0);
    tcnla_backend_t b;
    tcnla_get_backend(h, &b);
    if (ngpu == 0) CHECK(b == TCNLA_BACKEND_CPU);
    else CHECK(b == TCNLA_BACKEND_CUDA);
    tcnla_destroy(h);
    if (ngpu == 0) {
        tcnla_handle_t g = (tcnla_handle_t)1;
        CHECK_EQ_INT(tcnla_create(&g, TCNLA_BACKEND_CUDA), TCNLA_ERR_NO_BACKEND);
        CHECK(g == NULL);
    }
}

TEST(api_strerror_covers_every_status) {
    const int codes[] = {TCNLA_SUCCESS,         TCNLA_ERR_ALLOC,     TCNLA_ERR_NO_BACKEND,
                         TCNLA_ERR_NOT_SUPPORTED, TCNLA_ERR_RANGE,   TCNLA_ERR_CUDA,
                         TCNLA_ERR_CUBLAS,      TCNLA_ERR_CUSOLVER,  TCNLA_ERR_NUMERICAL,
                         TCNLA_ERR_INTERNAL};
    const int n = (int)(sizeof codes / sizeof codes[0]);
    for (int i = 0; i < n; i++) {
        const char *s = tcnla_strerror(codes[i]);
        REQUIRE(s != NULL);
        CHECK(strcmp(s, "unknown status") != 0);
        for (int j = 0; j < i; j++) CHECK(strcmp(s, tcnla_strerror(codes[j])) != 0);
    }
    CHECK(strstr(tcnla_strerror(-3), "argument 3") != NULL);
    CHECK(strstr(tcnla_strerror(-15), "argument 15") != NULL);
    CHECK(tcnla_strerror(12345) != NULL);
    CHECK(strcmp(tcnla_version(), TCNLA_VERSION_STRING) == 0);
}

TEST(api_memory_helpers_cpu) {
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    float src[5] = {1, 2, 3, 4, 5}, back[5] = {0};
    float *d = NULL, *e = NULL;
    CHECK(tcnla_malloc(h, (void **)&d, sizeof src) == 0 && d != NULL);
    CHECK(tcnla_malloc(h, (void **)&e, sizeof src) == 0 && e != NULL);
    CHECK(tcnla_memcpy(h, d, src, sizeof src, TCNLA_MEMCPY_HOST_TO_HANDLE) == 0);
    CHECK(tcnla_memcpy(h, e, d, sizeof src, TCNLA_MEMCPY_HANDLE_TO_HANDLE) == 0);
    CHECK(tcnla_memcpy(h, back, e, sizeof src, TCNLA_MEMCPY_HANDLE_TO_HOST) == 0);
    CHECK(memcmp(src, back, sizeof src) == 0);
    void *z = (void *)1;
    CHECK(tcnla_malloc(h, &z, 0) == 0 && z == NULL);
    CHECK_EQ_INT(tcnla_malloc(h, NULL, 8), -2);
    CHECK_EQ_INT(tcnla_memcpy(h, NULL, src, 4, TCNLA_MEMCPY_HOST_TO_HANDLE), -2);
    CHECK_EQ_INT(tcnla_memcpy(h, back, src, 4, (tcnla_memcpy_kind_t)9), -5);
    CHECK(tcnla_free(h, d) == 0 && tcnla_free(h, e) == 0 && tcnla_free(h, NULL) == 0);
    tcnla_destroy(h);
}

TEST(api_method_names_round_trip) {
    for (int m = 0; m < TCNLA_GEMM_METHOD_COUNT; m++) {
        tcnla_gemm_method_t back;
        const char *name = tcnla_gemm_method_name((tcnla_gemm_method_t)m);
        CHECK(tcnla_gemm_method_from_name(name, &back) == 0 && (int)back == m);
    }
    tcnla_gemm_method_t x;
    CHECK(tcnla_gemm_method_from_name("TCEC-FP16", &x) == 0 && x == TCNLA_GEMM_TCEC_FP16);
    CHECK(tcnla_gemm_method_from_name("sgemm", &x) == 0 && x == TCNLA_GEMM_NATIVE_FP32);
    CHECK_EQ_INT(tcnla_gemm_method_from_name("tcec_fp17", &x), -1);
    CHECK_EQ_INT(tcnla_gemm_method_from_name(NULL, &x), -1);
    CHECK(strcmp(tcnla_gemm_method_name((tcnla_gemm_method_t)99), "unknown") == 0);
}

TEST(api_settings_validate) {
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    tcnla_gemm_method_t m;
    CHECK(tcnla_get_gemm_method(h, &m) == 0 && m == TCNLA_GEMM_NATIVE_FP32);
    CHECK(tcnla_set_gemm_method(h, TCNLA_GEMM_TCEC_TF32) == 0);
    CHECK(tcnla_get_gemm_method(h, &m) == 0 && m == TCNLA_GEMM_TCEC_TF32);
    CHECK_EQ_INT(tcnla_set_gemm_method(h, TCNLA_GEMM_DEFAULT), -2);
    CHECK_EQ_INT(tcnla_set_gemm_method(h, (tcnla_gemm_method_t)40), -2);
    CHECK_EQ_INT(tcnla_set_gemm_method(NULL, TCNLA_GEMM_TF32), -1);
    CHECK_EQ_INT(tcnla_set_range_policy(h, (tcnla_range_policy_t)5), -2);
    tcnla_tc_model_t md = tcnla_tc_model_default(), got;
    CHECK(md.acc_bits == 25 && md.k_per_mma == 16 && md.tcec_chunk == 16);
    md.acc_bits = 23;
    CHECK_EQ_INT(tcnla_set_tc_model(h, &md), -2);
    md.acc_bits = 24;
    md.k_per_mma = 8;
    md.tcec_chunk = 12; /* not a multiple of 8 */
    CHECK_EQ_INT(tcnla_set_tc_model(h, &md), -2);
    md.tcec_chunk = 64;
    CHECK(tcnla_set_tc_model(h, &md) == 0);
    CHECK(tcnla_get_tc_model(h, &got) == 0 && got.acc_bits == 24 && got.tcec_chunk == 64);
    CHECK_EQ_INT(tcnla_set_tc_model(h, NULL), -2);
    tcnla_destroy(h);
}

TEST(api_memory_stats_track_live_and_peak) {
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    size_t cur = 1, peak = 1;
    CHECK(tcnla_memory_stats(h, &cur, &peak) == 0 && cur == 0 && peak == 0);
    void *a, *b, *c[100];
    CHECK(tcnla_malloc(h, &a, 1000) == 0 && tcnla_malloc(h, &b, 500) == 0);
    for (int i = 0; i < 100; i++) CHECK(tcnla_malloc(h, &c[i], 10) == 0); /* grows the table */
    tcnla_memory_stats(h, &cur, &peak);
    CHECK(cur == 2500 && peak == 2500);
    for (int i = 0; i < 100; i += 2) tcnla_free(h, c[i]);
    tcnla_free(h, a);
    tcnla_memory_stats(h, &cur, &peak);
    CHECK(cur == 1000 && peak == 2500);
    CHECK(tcnla_reset_peak_memory(h) == 0);
    tcnla_memory_stats(h, &cur, &peak);
    CHECK(peak == 1000);
    for (int i = 1; i < 100; i += 2) tcnla_free(h, c[i]);
    tcnla_free(h, b);
    tcnla_memory_stats(h, &cur, &peak);
    CHECK(cur == 0);
    CHECK_EQ_INT(tcnla_memory_stats(NULL, &cur, &peak), -1);
    tcnla_destroy(h);
}

/* tcnla_free takes only live blocks of tcnla_malloc on the same handle;
 * anything else is -2 and never reaches free(). */
TEST(api_free_rejects_foreign_and_freed_pointers) {
    tcnla_handle_t h = NULL, g = NULL;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    REQUIRE(tcnla_create(&g, TCNLA_BACKEND_CPU) == 0);
    void *p = NULL, *q = NULL;
    REQUIRE(tcnla_malloc(h, &p, 100) == 0 && p);
    REQUIRE(tcnla_malloc(g, &q, 100) == 0 && q);
    size_t cur0 = 0, cur1 = 0;
    CHECK(tcnla_memory_stats(h, &cur0, NULL) == 0 && cur0 >= 100);
    int on_stack = 0;
    CHECK_EQ_INT(tcnla_free(h, &on_stack), -2);        /* not from tcnla_malloc */
    CHECK_EQ_INT(tcnla_free(h, (char *)p + 8), -2);    /* inside a block */
    CHECK_EQ_INT(tcnla_free(h, q), -2);                /* another handle's block */
    CHECK_EQ_INT(tcnla_free(h, p), 0);
    CHECK_EQ_INT(tcnla_free(h, p), -2);                /* twice */
    CHECK_EQ_INT(tcnla_free(h, NULL), 0);
    CHECK_EQ_INT(tcnla_free(NULL, q), -1);
    CHECK(tcnla_memory_stats(h, &cur1, NULL) == 0 && cur1 == cur0 - 100);
    /* many live blocks (the table grows), freed in another order */
    void *blk[300];
    for (int i = 0; i < 300; i++) REQUIRE(tcnla_malloc(h, &blk[i], (size_t)(i + 1)) == 0);
    for (int i = 0; i < 300; i += 2) CHECK_EQ_INT(tcnla_free(h, blk[i]), 0);
    for (int i = 0; i < 300; i += 2) CHECK_EQ_INT(tcnla_free(h, blk[i]), -2);
    /* the odd ones stay live: tcnla_destroy frees them (AddressSanitizer's
     * leak check and the white-box test in src/backend/cpu/test_memory.c see it) */
    CHECK_EQ_INT(tcnla_destroy(h), 0);
    CHECK_EQ_INT(tcnla_free(g, q), 0);
    CHECK_EQ_INT(tcnla_destroy(g), 0);
}
