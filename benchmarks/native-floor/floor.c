/*
 * The native floor: what the work of each CachedAes benchmark row costs when written directly in C against
 * the libcrypto that CachedAes loads (libcrypto.so.3 on Linux). Build and run with floor.sh.
 *
 * Every row is AES-256, the key and sizes of the BenchmarkDotNet suite, PKCS7 semantics: a plaintext of
 * `size` bytes is a ciphertext of (size / 16 + 1) * 16 bytes (the suite's sizes are all multiples of 16, so
 * a 16 B message is a 32 B, two-block operation in both directions). Padding itself is not counted: the
 * inputs are prepared (plaintext already padded, ciphertext already made), so a floor row is the native
 * cipher work only, which is the least any managed wrapper can cost.
 *
 * Variants (first CSV column):
 *   floor           A context created and keyed once, reused for every call, padding off.
 *                   EncryptEcb / DecryptEcb: one EVP_CipherUpdate of the whole padded length.
 *                   EncryptCbc / DecryptCbc: the "never reset" scheme. The CBC context is never restarted at
 *                     an IV; it keeps chaining from the last ciphertext block it processed (`chain`). A new
 *                     message at IV is started by a first-block fix-up: encrypt XORs the first plaintext
 *                     block with IV ^ chain before the update (so the context's own XOR with `chain` leaves
 *                     P0 ^ IV, as CBC needs); decrypt XORs the first output block with IV ^ chain after it.
 *                     Counted per call: one EVP_CipherUpdate of the whole message, the 16-byte fix-up (and,
 *                     for encrypt, restoring the first input block, since the input buffer is reused), and
 *                     remembering the last ciphertext block as the next `chain`.
 *                   EncryptKeyWrapPadded / DecryptKeyWrapPadded: RFC 5649 over one reused ECB context, one
 *                     16-byte EVP_CipherUpdate per AES step, the same algorithm as CachedAes's KeyWrap.cs
 *                     (size = the plaintext key length).
 *   cbc-restart     CBC the conventional way on a reused context: EVP_CipherInit_ex(ctx, NULL, NULL, NULL,
 *                   iv, -1) to restart at the message's IV, then one EVP_CipherUpdate.
 *   stock-sequence  What stock .NET's one-shot does natively per call (its OpenSSL shim): EVP_CIPHER_CTX_new,
 *                   EVP_CipherInit_ex with the implicit-fetch EVP_aes_256_ecb()/_cbc() and no key, set the key
 *                   length, EVP_CipherInit_ex with key and IV, set_padding(0), one EVP_CipherUpdate,
 *                   EVP_CipherFinal_ex, EVP_CIPHER_CTX_free. (Stock pads in managed code, so padding is off.)
 *   rekey           A new key before every message on a reused context: EVP_CipherInit_ex(ctx, NULL, NULL, key, iv,
 *                   -1) (ECB: no IV), the same-size re-key EVP_EncryptInit(3) documents, then one EVP_CipherUpdate.
 *                   The row re-keys with the same key bytes each time, so its output can be checked; OpenSSL runs
 *                   the whole key schedule whatever the key's value. Encryption contexts keep OpenSSL's padding on,
 *                   as CachedAes's do (a re-key of a context with EVP_CIPHER_CTX_set_padding(ctx, 0) also re-applies
 *                   that setting, about 430 instructions of parameter lookup); on OpenSSL 3 decryption contexts
 *                   turn padding off through the provider's "padding" parameter instead, as CachedAes's do where
 *                   its probe allows, which a re-key leaves alone. (The native work of a kept instance given
 *                   another key per message: the Breakdown's newkey row.)
 *
 * Output: CSV on stdout, one row per (variant, operation, size):
 *   variant,operation,size,median_ns,min_ns,max_ns,iterations,repetitions
 * median_ns is the median over `repetitions` timed loops of `iterations` calls each (CLOCK_MONOTONIC), after a
 * warm-up. Lines starting with '#' are metadata (OpenSSL version, settings). Before anything is timed, every
 * scheme is checked against OpenSSL's own one-shot result (CBC over several consecutive messages, key wrap
 * against OpenSSL's AES-256-WRAP-PAD); a mismatch exits with status 3.
 *
 * Options:
 *   --filter TEXT      only rows whose "variant,operation,size" contains TEXT (e.g. "floor,EncryptEcb,16,")
 *   --rep-ms MS        target duration of one timed loop (default 20)
 *   --reps N           timed loops per row (default 9; the median is reported)
 *   --warmup-ms MS     warm-up per row (default 20)
 *   --iterations N     a fixed number of calls per loop instead of calibrating (for callgrind: run twice with
 *                      two N, --reps 1 --warmup-ms 0, and divide the difference of the instruction totals by
 *                      the difference of the N's; setup and the self-check cancel out)
 *   --no-check         skip the self-check (callgrind runs: it is identical in both runs anyway)
 */
#define _POSIX_C_SOURCE 199309L
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK 16
#define MAX_MESSAGE (16384 + BLOCK)
#define MAX_WRAP (4097 + 16)

static const int cipher_sizes[] = {16, 32, 64, 128, 1024, 16384};
static const int wrap_sizes[] = {1, 8, 15, 16, 32, 512, 513, 4096, 4097};

enum op { ENCRYPT_ECB, DECRYPT_ECB, ENCRYPT_CBC, DECRYPT_CBC, WRAP, UNWRAP };
static const char *const op_names[] = {
    "EncryptEcb", "DecryptEcb", "EncryptCbc", "DecryptCbc", "EncryptKeyWrapPadded", "DecryptKeyWrapPadded",
};
enum variant { FLOOR, CBC_RESTART, STOCK_SEQUENCE, REKEY };
static const char *const variant_names[] = {"floor", "cbc-restart", "stock-sequence", "rekey"};

static unsigned char key[32];
static unsigned char iv[BLOCK];
static volatile unsigned sink; /* keeps every result observable */

static void die(const char *what)
{
    fprintf(stderr, "floor: %s failed\n", what);
    exit(2);
}

static void fill(unsigned char *bytes, size_t length, uint32_t seed)
{
    uint32_t state = seed * 2654435761u + 1u;
    for (size_t i = 0; i < length; i++) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        bytes[i] = (unsigned char)state;
    }
}

static void xor_block(unsigned char *out, const unsigned char *a, const unsigned char *b)
{
    for (int i = 0; i < BLOCK; i++) {
        out[i] = a[i] ^ b[i];
    }
}

static EVP_CIPHER_CTX *keyed_context(const EVP_CIPHER *cipher, int encrypt)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL || EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, encrypt) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
        die("creating a keyed context");
    }
    return ctx;
}

static void update(EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *in, int length)
{
    int written;
    if (EVP_CipherUpdate(ctx, out, &written, in, length) != 1 || written != length) {
        die("EVP_CipherUpdate");
    }
}

/* ---- one row: its state and one call ---- */

struct row {
    enum variant variant;
    enum op op;
    int size;          /* plaintext length */
    int length;        /* input length of one call */
    unsigned char in[MAX_MESSAGE];
    unsigned char out[MAX_MESSAGE];
    EVP_CIPHER_CTX *ctx;    /* the reused context (floor, cbc-restart) */
    EVP_CIPHER_CTX *ecb;    /* key wrap: the reused ECB context */
    unsigned char chain[BLOCK]; /* never-reset CBC: the context's current chaining block */
};

static int padded_length(int size) { return (size / BLOCK + 1) * BLOCK; }

static int wrapped_length(int size) { return (size + 7) / 8 * 8 + 8; }

/* RFC 5649 wrap of key material `in` (n bytes) into `out` (wrapped_length(n) bytes), one update per AES step. */
static void kw_wrap(EVP_CIPHER_CTX *ecb, const unsigned char *in, int n, unsigned char *out)
{
    unsigned char b[BLOCK];
    int padded = (n + 7) / 8 * 8;
    unsigned char *r = out + 8;
    b[0] = 0xA6; b[1] = 0x59; b[2] = 0x59; b[3] = 0xA6;
    b[4] = (unsigned char)(n >> 24); b[5] = (unsigned char)(n >> 16);
    b[6] = (unsigned char)(n >> 8); b[7] = (unsigned char)n;
    memcpy(r, in, (size_t)n);
    memset(r + n, 0, (size_t)(padded - n));
    if (padded == 8) {
        memcpy(b + 8, r, 8);
        update(ecb, out, b, BLOCK);
        return;
    }
    int k = padded / 8;
    for (int j = 0; j < 6; j++) {
        for (int i = 1; i <= k; i++) {
            memcpy(b + 8, r + 8 * (i - 1), 8);
            update(ecb, b, b, BLOCK);
            uint64_t t = (uint64_t)k * (uint64_t)j + (uint64_t)i;
            for (int x = 7; x >= 0; x--, t >>= 8) {
                b[x] ^= (unsigned char)t;
            }
            memcpy(r + 8 * (i - 1), b + 8, 8);
        }
    }
    memcpy(out, b, 8);
}

/* RFC 5649 unwrap of `in` (m bytes) into `out` (m - 8 bytes); returns the key length, or -1 on an integrity failure. */
static int kw_unwrap(EVP_CIPHER_CTX *ecb, const unsigned char *in, int m, unsigned char *out)
{
    unsigned char b[BLOCK];
    int padded = m - 8;
    if (m == BLOCK) {
        update(ecb, b, in, BLOCK);
        memcpy(out, b + 8, 8);
    } else {
        int k = padded / 8;
        memcpy(b, in, 8);
        memcpy(out, in + 8, (size_t)padded);
        for (int j = 5; j >= 0; j--) {
            for (int i = k; i >= 1; i--) {
                uint64_t t = (uint64_t)k * (uint64_t)j + (uint64_t)i;
                for (int x = 7; x >= 0; x--, t >>= 8) {
                    b[x] ^= (unsigned char)t;
                }
                memcpy(b + 8, out + 8 * (i - 1), 8);
                update(ecb, b, b, BLOCK);
                memcpy(out + 8 * (i - 1), b + 8, 8);
            }
        }
    }
    uint32_t mli = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
    int bad = b[0] != 0xA6 || b[1] != 0x59 || b[2] != 0x59 || b[3] != 0xA6;
    bad |= mli <= (uint32_t)(padded - 8) || mli > (uint32_t)padded;
    for (int p = bad ? padded : (int)mli; p < padded; p++) {
        bad |= out[p] != 0;
    }
    return bad ? -1 : (int)mli;
}

static const EVP_CIPHER *cipher_of(enum op op)
{
    return op == ENCRYPT_CBC || op == DECRYPT_CBC ? EVP_aes_256_cbc() : EVP_aes_256_ecb();
}

static int encrypting(enum op op) { return op == ENCRYPT_ECB || op == ENCRYPT_CBC || op == WRAP; }

/* One call of the row's work; returns the bytes produced. */
static int run_once(struct row *r)
{
    unsigned char first[BLOCK];
    unsigned char fix[BLOCK];
    int written;

    switch (r->variant) {
    case FLOOR:
        switch (r->op) {
        case ENCRYPT_ECB:
        case DECRYPT_ECB:
            update(r->ctx, r->out, r->in, r->length);
            return r->length;
        case ENCRYPT_CBC:
            memcpy(first, r->in, BLOCK);
            xor_block(fix, iv, r->chain);
            xor_block(r->in, first, fix);
            update(r->ctx, r->out, r->in, r->length);
            memcpy(r->in, first, BLOCK);
            memcpy(r->chain, r->out + r->length - BLOCK, BLOCK);
            return r->length;
        case DECRYPT_CBC:
            update(r->ctx, r->out, r->in, r->length);
            xor_block(fix, iv, r->chain);
            xor_block(r->out, r->out, fix);
            memcpy(r->chain, r->in + r->length - BLOCK, BLOCK);
            return r->length;
        case WRAP:
            kw_wrap(r->ecb, r->in, r->size, r->out);
            return wrapped_length(r->size);
        case UNWRAP:
            return kw_unwrap(r->ecb, r->in, r->length, r->out);
        }
        break;
    case CBC_RESTART:
        if (EVP_CipherInit_ex(r->ctx, NULL, NULL, NULL, iv, -1) != 1) {
            die("EVP_CipherInit_ex (IV restart)");
        }
        update(r->ctx, r->out, r->in, r->length);
        return r->length;
    case STOCK_SEQUENCE: {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int enc = encrypting(r->op);
        if (ctx == NULL || EVP_CipherInit_ex(ctx, cipher_of(r->op), NULL, NULL, NULL, enc) != 1 ||
            EVP_CIPHER_CTX_set_key_length(ctx, (int)sizeof key) != 1 ||
            EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, enc) != 1 || EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
            die("the stock sequence's context");
        }
        update(ctx, r->out, r->in, r->length);
        if (EVP_CipherFinal_ex(ctx, r->out + r->length, &written) != 1 || written != 0) {
            die("EVP_CipherFinal_ex");
        }
        EVP_CIPHER_CTX_free(ctx);
        return r->length;
    }
    case REKEY: {
        int cbc = r->op == ENCRYPT_CBC || r->op == DECRYPT_CBC;
        if (EVP_CipherInit_ex(r->ctx, NULL, NULL, key, cbc ? iv : NULL, -1) != 1) {
            die("EVP_CipherInit_ex (re-key)");
        }
        update(r->ctx, r->out, r->in, r->length);
        return r->length;
    }
    }
    die("an unknown row");
    return 0;
}

/* OpenSSL's own one-shot with PKCS7 padding on a fresh context: the reference every scheme must match. */
static int reference(enum op op, const unsigned char *in, int length, unsigned char *out)
{
    int a, b;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL || EVP_CipherInit_ex(ctx, cipher_of(op), NULL, key, iv, encrypting(op)) != 1 ||
        EVP_CipherUpdate(ctx, out, &a, in, length) != 1 || EVP_CipherFinal_ex(ctx, out + a, &b) != 1) {
        die("the reference one-shot");
    }
    EVP_CIPHER_CTX_free(ctx);
    return a + b;
}

static int reference_wrap(const unsigned char *in, int n, unsigned char *out)
{
    int a, b;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) {
        die("EVP_CIPHER_CTX_new");
    }
    EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
    if (EVP_CipherInit_ex(ctx, EVP_aes_256_wrap_pad(), NULL, key, NULL, 1) != 1 ||
        EVP_CipherUpdate(ctx, out, &a, in, n) != 1 || EVP_CipherFinal_ex(ctx, out + a, &b) != 1) {
        die("the reference AES-256-WRAP-PAD");
    }
    EVP_CIPHER_CTX_free(ctx);
    return a + b;
}

/* Prepares the row's input (padded plaintext, or ciphertext / wrapped key made by the reference) and contexts. */
static void setup(struct row *r, enum variant variant, enum op op, int size)
{
    static unsigned char plain[MAX_MESSAGE];
    memset(r, 0, sizeof *r);
    r->variant = variant;
    r->op = op;
    r->size = size;
    fill(plain, (size_t)size, (uint32_t)size);

    if (op == WRAP || op == UNWRAP) {
        r->ecb = keyed_context(EVP_aes_256_ecb(), op == WRAP);
        if (op == WRAP) {
            memcpy(r->in, plain, (size_t)size);
            r->length = size;
        } else {
            r->length = reference_wrap(plain, size, r->in);
        }
        return;
    }

    int length = padded_length(size);
    if (encrypting(op)) {
        /* PKCS7-padded plaintext: the work is counted from here. */
        memcpy(r->in, plain, (size_t)size);
        memset(r->in + size, length - size, (size_t)(length - size));
    } else {
        enum op forward = op == DECRYPT_ECB ? ENCRYPT_ECB : ENCRYPT_CBC;
        if (reference(forward, plain, size, r->in) != length) {
            die("preparing the ciphertext");
        }
    }
    r->length = length;
    if (variant != STOCK_SEQUENCE) {
        r->ctx = keyed_context(cipher_of(op), encrypting(op));
        if (variant == REKEY && encrypting(op) && EVP_CIPHER_CTX_set_padding(r->ctx, 1) != 1) {
            /* As CachedAes's encryption contexts: OpenSSL's padding left on (only EVP_CipherFinal_ex, never called,
               would add it), so a re-key does not re-apply a padding setting. */
            die("EVP_CIPHER_CTX_set_padding");
        }
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
        if (variant == REKEY && !encrypting(op)) {
            /* As CachedAes's decryption contexts on OpenSSL 3: padding off through the provider's parameter, without
               EVP_CIPHER_CTX_set_padding's flag (cleared here by turning it back on first), so that a re-key does not
               re-apply it. */
            unsigned int off = 0;
            OSSL_PARAM params[] = {OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING, &off), OSSL_PARAM_construct_end()};
            if (EVP_CIPHER_CTX_set_padding(r->ctx, 1) != 1 || EVP_CIPHER_CTX_set_params(r->ctx, params) != 1) {
                die("padding off through the provider's parameter");
            }
        }
#endif
        memcpy(r->chain, iv, BLOCK); /* the context was keyed with iv and has processed nothing yet */
    }
}

static void teardown(struct row *r)
{
    EVP_CIPHER_CTX_free(r->ctx);
    EVP_CIPHER_CTX_free(r->ecb);
}

/* Runs the prepared row `calls` times (messages on a reused context must all come out the same): 0 when every call
   wrote `length` bytes equal to `expected`, else 1, with a message naming `what` and the first call that did not. */
static int check_calls(struct row *r, int calls, int length, const unsigned char *expected, const char *what, int size)
{
    for (int call = 0; call < calls; call++) {
        int written = run_once(r);
        if (written != length || memcmp(r->out, expected, (size_t)length) != 0) {
            fprintf(stderr, "floor: self-check failed: %s %d B, call %d\n", what, size, call + 1);
            return 1;
        }
    }
    return 0;
}

static int self_check(void)
{
    static struct row r;
    static unsigned char plain[MAX_MESSAGE];
    static unsigned char expected[MAX_MESSAGE + BLOCK];
    int failures = 0;

    for (int v = FLOOR; v <= REKEY; v++) {
        for (int op = ENCRYPT_ECB; op <= DECRYPT_CBC; op++) {
            if (v == CBC_RESTART && (op == ENCRYPT_ECB || op == DECRYPT_ECB)) {
                continue;
            }
            for (size_t s = 0; s < sizeof cipher_sizes / sizeof cipher_sizes[0]; s++) {
                int size = cipher_sizes[s];
                setup(&r, (enum variant)v, (enum op)op, size);
                fill(plain, (size_t)size, (uint32_t)size);
                int expected_length = encrypting((enum op)op) ? reference((enum op)op, plain, size, expected)
                                                              : padded_length(size);
                if (!encrypting((enum op)op)) {
                    /* the decrypt rows leave the padding in place, as CachedAes's native step does */
                    memcpy(expected, plain, (size_t)size);
                    memset(expected + size, padded_length(size) - size, (size_t)(padded_length(size) - size));
                }
                /* several consecutive messages: the never-reset CBC context must restart at IV every time */
                char what[64];
                snprintf(what, sizeof what, "%s %s", variant_names[v], op_names[op]);
                failures += check_calls(&r, 3, expected_length, expected, what, size);
                teardown(&r);
            }
        }
    }

    for (size_t s = 0; s < sizeof wrap_sizes / sizeof wrap_sizes[0]; s++) {
        int size = wrap_sizes[s];
        fill(plain, (size_t)size, (uint32_t)size);
        int wrapped = reference_wrap(plain, size, expected);
        setup(&r, FLOOR, WRAP, size);
        failures += check_calls(&r, 2, wrapped, expected, "key wrap", size);
        teardown(&r);
        setup(&r, FLOOR, UNWRAP, size);
        failures += check_calls(&r, 2, size, plain, "key unwrap", size);
        /* a corrupted wrap must fail the integrity check */
        r.in[r.length - 1] ^= 1;
        if (run_once(&r) != -1) {
            fprintf(stderr, "floor: self-check failed: a corrupted %d B wrap was accepted\n", size);
            failures++;
        }
        teardown(&r);
    }
    return failures;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double loop_ns(struct row *r, long iterations)
{
    unsigned acc = 0;
    double start = now_ns();
    for (long i = 0; i < iterations; i++) {
        acc += (unsigned)run_once(r) + r->out[0];
    }
    double elapsed = now_ns() - start;
    sink += acc;
    return elapsed;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct settings {
    const char *filter;
    double rep_ms;
    int reps;
    double warmup_ms;
    long iterations; /* 0: calibrate */
    int check;
};

static void measure(struct row *r, const struct settings *s)
{
    char name[96];
    snprintf(name, sizeof name, "%s,%s,%d,", variant_names[r->variant], op_names[r->op], r->size);
    if (s->filter != NULL && strstr(name, s->filter) == NULL) {
        return;
    }

    long iterations = s->iterations;
    if (s->warmup_ms > 0) {
        double deadline = now_ns() + s->warmup_ms * 1e6;
        while (now_ns() < deadline) {
            loop_ns(r, 16);
        }
    }
    if (iterations <= 0) {
        /* calibrate: grow until one loop takes a quarter of the target, then scale */
        long n = 1;
        while (loop_ns(r, n) < s->rep_ms * 1e6 / 4 && n < (1L << 40)) {
            n *= 2;
        }
        /* the fastest of three loops, so that one preempted loop does not shrink the count */
        double fastest = loop_ns(r, n);
        for (int i = 0; i < 2; i++) {
            double t = loop_ns(r, n);
            fastest = t < fastest ? t : fastest;
        }
        iterations = (long)((double)n * (s->rep_ms * 1e6) / (fastest > 0 ? fastest : 1));
        if (iterations < 1) {
            iterations = 1;
        }
    }

    double per_call[64];
    int reps = s->reps < 64 ? s->reps : 64;
    for (int i = 0; i < reps; i++) {
        per_call[i] = loop_ns(r, iterations) / (double)iterations;
    }
    qsort(per_call, (size_t)reps, sizeof per_call[0], compare_doubles);
    double median = reps % 2 ? per_call[reps / 2] : (per_call[reps / 2 - 1] + per_call[reps / 2]) / 2;
    printf("%s%.1f,%.1f,%.1f,%ld,%d\n", name, median, per_call[0], per_call[reps - 1], iterations, reps);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct settings s = {NULL, 20, 9, 20, 0, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-check") == 0) {
            s.check = 0;
            continue;
        }
        if (value == NULL) {
            fprintf(stderr, "floor: unknown option or missing value: %s (see the comment at the top of floor.c)\n", a);
            return 2;
        }
        if (strcmp(a, "--filter") == 0) {
            s.filter = value;
        } else if (strcmp(a, "--rep-ms") == 0) {
            s.rep_ms = atof(value);
        } else if (strcmp(a, "--reps") == 0) {
            s.reps = atoi(value);
        } else if (strcmp(a, "--warmup-ms") == 0) {
            s.warmup_ms = atof(value);
        } else if (strcmp(a, "--iterations") == 0) {
            s.iterations = atol(value);
        } else {
            fprintf(stderr, "floor: unknown option: %s (see the comment at the top of floor.c)\n", a);
            return 2;
        }
        i++;
    }
    if (s.reps < 1 || s.rep_ms <= 0) {
        fprintf(stderr, "floor: --reps and --rep-ms must be positive\n");
        return 2;
    }

    fill(key, sizeof key, 0x11);
    fill(iv, sizeof iv, 0x5A);

    printf("# openssl=%s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("# settings=rep_ms %.0f, reps %d, warmup_ms %.0f, iterations %s\n", s.rep_ms, s.reps, s.warmup_ms,
           s.iterations > 0 ? "fixed" : "calibrated");
    if (s.check) {
        int failures = self_check();
        if (failures != 0) {
            fprintf(stderr, "floor: %d self-check failure(s); nothing timed\n", failures);
            return 3;
        }
        printf("# self-check=passed\n");
    }
    printf("variant,operation,size,median_ns,min_ns,max_ns,iterations,repetitions\n");

    static struct row r;
    for (int v = FLOOR; v <= REKEY; v++) {
        for (int op = ENCRYPT_ECB; op <= DECRYPT_CBC; op++) {
            if (v == CBC_RESTART && (op == ENCRYPT_ECB || op == DECRYPT_ECB)) {
                continue;
            }
            for (size_t i = 0; i < sizeof cipher_sizes / sizeof cipher_sizes[0]; i++) {
                setup(&r, (enum variant)v, (enum op)op, cipher_sizes[i]);
                measure(&r, &s);
                teardown(&r);
            }
        }
        if (v == FLOOR) {
            for (int op = WRAP; op <= UNWRAP; op++) {
                for (size_t i = 0; i < sizeof wrap_sizes / sizeof wrap_sizes[0]; i++) {
                    setup(&r, FLOOR, (enum op)op, wrap_sizes[i]);
                    measure(&r, &s);
                    teardown(&r);
                }
            }
        }
    }
    return 0;
}
