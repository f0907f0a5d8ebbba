/* Unit tests for core/expr.c: precedence, the documented cdiv/`/`/`%` semantics on negatives, overflow
 * and division by zero as errors (never UB: this runs under UBSan), unknown names, syntax errors. */
#include <stdint.h>

#include "expr.h"
#include "testing.h"

/* arrays passed through a function so CHECK_STR's NULL test does not warn */
static const char *str_of(const char *s)
{
	return s;
}

static struct kf_shape shape_bn(void)
{
	struct kf_shape s = {0};
	kf_shape_set(&s, "B", 64);
	kf_shape_set(&s, "N", 1000);
	kf_shape_set(&s, "Z", 0);
	kf_shape_set(&s, "BIG", INT64_MAX);
	kf_shape_set(&s, "MIN", INT64_MIN);
	return s;
}

static int64_t ev(const char *src)
{
	struct kf_shape s = shape_bn();
	struct kf_err err = KF_ERR_INIT;
	int64_t v = -999999;
	enum kf_status st = kf_expr_eval(src, &s, &v, &err);
	CHECKF(st == KF_OK, "'%s': %s", src, err.msg);
	return v;
}

static enum kf_status ev_err(const char *src, struct kf_err *err)
{
	struct kf_shape s = shape_bn();
	int64_t v = 0;
	kf_err_clear(err);
	return kf_expr_eval(src, &s, &v, err);
}

static void test_precedence(void)
{
	CHECK_EQ_INT(ev("1+2*3"), 7);
	CHECK_EQ_INT(ev("(1+2)*3"), 9);
	CHECK_EQ_INT(ev("10-4-3"), 3); /* left associative */
	CHECK_EQ_INT(ev("100/10/5"), 2);
	CHECK_EQ_INT(ev("2*3%4"), 2); /* (2*3)%4 */
	CHECK_EQ_INT(ev("-2*3"), -6);
	CHECK_EQ_INT(ev("-(2+3)*2"), -10);
	CHECK_EQ_INT(ev("--5"), 5);
	CHECK_EQ_INT(ev("+7"), 7);
	CHECK_EQ_INT(ev("5*B*N"), 320000);
	CHECK_EQ_INT(ev("  B *  ( N + 1 ) "), 64 * 1001);
	CHECK_EQ_INT(ev("0"), 0);
	CHECK_EQ_INT(ev("9223372036854775807"), INT64_MAX);
}

static void test_functions(void)
{
	CHECK_EQ_INT(ev("cdiv(N,256)"), 4);
	CHECK_EQ_INT(ev("cdiv(1024, 256)"), 4);
	CHECK_EQ_INT(ev("cdiv(1025,256)"), 5);
	CHECK_EQ_INT(ev("min(B,N)"), 64);
	CHECK_EQ_INT(ev("max(B, N)"), 1000);
	CHECK_EQ_INT(ev("min(max(B,3),cdiv(N,2))*2"), 128);
	CHECK_EQ_INT(ev("cdiv(B*N, min(256, N))"), 250);
	CHECK_EQ_INT(ev("max(-3,-5)"), -3);
}

/* cdiv is the mathematical ceiling for every sign; / truncates and % follows the dividend, as in C. */
static void test_negatives(void)
{
	CHECK_EQ_INT(ev("cdiv(7,2)"), 4);
	CHECK_EQ_INT(ev("cdiv(-7,2)"), -3);
	CHECK_EQ_INT(ev("cdiv(7,-2)"), -3);
	CHECK_EQ_INT(ev("cdiv(-7,-2)"), 4);
	CHECK_EQ_INT(ev("cdiv(6,3)"), 2);
	CHECK_EQ_INT(ev("cdiv(-6,3)"), -2);
	CHECK_EQ_INT(ev("cdiv(0,5)"), 0);
	CHECK_EQ_INT(ev("-7/2"), -3);
	CHECK_EQ_INT(ev("7/-2"), -3);
	CHECK_EQ_INT(ev("-7%2"), -1);
	CHECK_EQ_INT(ev("7%-2"), 1);
	CHECK_EQ_INT(ev("cdiv(BIG,1)"), INT64_MAX);
	CHECK_EQ_INT(ev("cdiv(BIG,2)"), INT64_MAX / 2 + 1);
	CHECK_EQ_INT(ev("cdiv(MIN,2)"), INT64_MIN / 2);
}

static void test_range_errors(void)
{
	struct kf_err err;
	CHECK_EQ_INT(ev_err("N/(B-B)", &err), KF_ERR_RANGE);
	CHECK_CONTAINS(err.msg, "division by zero in 'N/(B-B)'");
	CHECK_EQ_INT(ev_err("1 + N/Z", &err), KF_ERR_RANGE);
	CHECK_CONTAINS(err.msg, "division by zero in 'N/Z'");
	CHECK_CONTAINS(err.msg, "1 + N/Z");
	CHECK_EQ_INT(ev_err("N%Z", &err), KF_ERR_RANGE);
	CHECK_CONTAINS(err.msg, "modulo by zero");
	CHECK_EQ_INT(ev_err("cdiv(N,Z)", &err), KF_ERR_RANGE);
	CHECK_CONTAINS(err.msg, "division by zero");
	CHECK_EQ_INT(ev_err("BIG+1", &err), KF_ERR_RANGE);
	CHECK_CONTAINS(err.msg, "overflow in 'BIG+1'");
	CHECK_EQ_INT(ev_err("MIN-1", &err), KF_ERR_RANGE);
	CHECK_EQ_INT(ev_err("BIG*2", &err), KF_ERR_RANGE);
	CHECK_EQ_INT(ev_err("MIN*-1", &err), KF_ERR_RANGE);
	CHECK_EQ_INT(ev_err("-MIN", &err), KF_ERR_RANGE);
	CHECK_EQ_INT(ev_err("MIN/-1", &err), KF_ERR_RANGE);
	CHECK_EQ_INT(ev_err("MIN%-1", &err), KF_ERR_RANGE);
	CHECK_EQ_INT(ev_err("cdiv(MIN,-1)", &err), KF_ERR_RANGE);
	CHECK_EQ_INT(ev_err("9223372036854775808", &err), KF_ERR_RANGE);
	CHECK_CONTAINS(err.msg, "out of range");
	CHECK_EQ_INT(ev_err("65536*65536*65536*65536", &err), KF_ERR_RANGE);
}

static void test_syntax_and_names(void)
{
	struct kf_err err;
	CHECK_EQ_INT(ev_err("Q*2", &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "unknown name 'Q'");
	CHECK_EQ_INT(ev_err("B+", &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "unexpected end");
	CHECK_EQ_INT(ev_err("B+*N", &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "'*'");
	CHECK_EQ_INT(ev_err("(B", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("B)", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("   ", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("pow(B,2)", &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "unknown function 'pow'");
	CHECK_EQ_INT(ev_err("cdiv(B)", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("min(B,N,3)", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("B N", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("12abc", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("1.5", &err), KF_ERR_PARSE);
	CHECK_EQ_INT(ev_err("B<<2", &err), KF_ERR_PARSE);
	/* hostile nesting is an error, not a stack overflow */
	{
		char deep[4001];
		memset(deep, '(', 2000);
		deep[2000] = '1';
		memset(deep + 2001, ')', 1999);
		deep[4000] = '\0';
		CHECK_EQ_INT(ev_err(deep, &err), KF_ERR_PARSE);
		CHECK_CONTAINS(err.msg, "nested too deeply");
	}
	CHECK_EQ_INT(kf_expr_eval("B", NULL, NULL, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_expr_eval("3*4", NULL, NULL, NULL), KF_OK);
}

static void test_check(void)
{
	const char *dims[] = {"B", "N"};
	struct kf_err err = KF_ERR_INIT;
	CHECK_EQ_INT(kf_expr_check("cdiv(N,256)*B", dims, 2, &err), KF_OK);
	/* check does no arithmetic: division by a name is fine until a shape is known */
	CHECK_EQ_INT(kf_expr_check("N/(B-B)", dims, 2, &err), KF_OK);
	CHECK_EQ_INT(kf_expr_check("Q+1", dims, 2, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "unknown dim 'Q'");
	CHECK_EQ_INT(kf_expr_check("Q+1", NULL, 0, &err), KF_OK); /* syntax only */
	CHECK_EQ_INT(kf_expr_check("Q+", NULL, 0, &err), KF_ERR_PARSE);
	CHECK_EQ_INT(kf_expr_check("-B", dims, 2, &err), KF_OK);
}

static void test_shape(void)
{
	struct kf_shape s = {0};
	char buf[64];
	int64_t v = 0;
	CHECK_EQ_INT(kf_shape_set(&s, "B", 64), KF_OK);
	CHECK_EQ_INT(kf_shape_set(&s, "N", 1000), KF_OK);
	CHECK_EQ_INT(kf_shape_set(&s, "B", 3), KF_OK); /* replace */
	CHECK_EQ_INT(s.n, 2);
	CHECK(kf_shape_get(&s, "B", &v) && v == 3);
	CHECK(!kf_shape_get(&s, "Q", &v));
	kf_shape_format(&s, buf, sizeof(buf));
	CHECK_STR(str_of(buf), "B=3 N=1000");
	kf_shape_format(&s, buf, 6); /* truncated, still terminated */
	CHECK(strlen(buf) < 6);
	for (int i = 0; i < KF_MAX_DIMS; i++) {
		char nm[8];
		snprintf(nm, sizeof(nm), "d%d", i);
		kf_shape_set(&s, nm, i);
	}
	CHECK_EQ_INT(kf_shape_set(&s, "one_more", 1), KF_ERR_LIMIT);
	CHECK_EQ_INT(kf_shape_set(&s, "", 1), KF_ERR_INVALID);
}

/* Random strings over the grammar's alphabet (fixed seed): every result is OK or one of the three
 * documented errors, and nothing trips the sanitizers. */
static void test_random_inputs(void)
{
	static const char alphabet[] = "0123456789BNZ+-*/%(),  cdivminmaxBIGMIN9223372036854775807";
	struct kf_shape s = shape_bn();
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int it = 0; it < 20000; it++) {
		char src[48];
		size_t n;
		int64_t v;
		struct kf_err err = KF_ERR_INIT;
		enum kf_status st;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = 1 + x % (sizeof(src) - 1);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			src[i] = alphabet[x % (sizeof(alphabet) - 1)];
		}
		src[n] = '\0';
		st = kf_expr_eval(src, &s, &v, &err);
		CHECKF(st == KF_OK || st == KF_ERR_PARSE || st == KF_ERR_INVALID || st == KF_ERR_RANGE,
		       "'%s': %s", src, kf_status_name(st));
		CHECKF(st == KF_OK || err.msg[0], "'%s': error without a message", src);
		st = kf_expr_check(src, NULL, 0, &err);
		CHECKF(st == KF_OK || st == KF_ERR_PARSE, "'%s': check gave %s", src, kf_status_name(st));
	}
}

KF_TEST_MAIN(TEST(test_random_inputs), TEST(test_precedence), TEST(test_functions), TEST(test_negatives),
	     TEST(test_range_errors), TEST(test_syntax_and_names), TEST(test_check), TEST(test_shape))
