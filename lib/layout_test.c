/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the --parallel-layout= spec parser, resolver and formatter. */
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "tap.h"

/* Parse must fail and the message must contain every needle. */
static void
bad(const char *spec, const char *n1, const char *n2)
{
	struct pl_layout l;
	pl_err_t err;
	char name[41];
	size_t i;
	int rc;

	/* A test name must stay on one TAP line. */
	snprintf(name, sizeof(name), "%s", spec ? spec : "(null)");
	for (i = 0; name[i]; i++)
		if ((unsigned char)name[i] < 0x20 ||
		    (unsigned char)name[i] >= 0x7f)
			name[i] = '?';
	pl_err_clear(&err);
	rc = layout_parse(spec, &l, &err);
	ok(rc == -1, "'%s' is rejected", name);
	like(err.text, n1, "'%s': message has '%s'", name, n1);
	if (n2)
		like(err.text, n2, "'%s': message has '%s'", name, n2);
	diag("  %s", err.text);
}

static int
parse(const char *spec, struct pl_layout *l)
{
	pl_err_t err;
	int rc;

	pl_err_clear(&err);
	rc = layout_parse(spec, l, &err);
	if (!ok(rc == 0, "'%s' parses", spec))
		diag("  %s", err.text);
	return rc;
}

/* Resolve must fail with a message containing both needles. */
static void
bad_resolve(const char *spec, long world, const char *n1, const char *n2)
{
	struct pl_layout l;
	pl_err_t err;

	if (parse(spec, &l) < 0)
		return;
	pl_err_clear(&err);
	ok(layout_resolve(&l, world, &err) == -1, "'%s' at world %ld fails",
	   spec, world);
	like(err.text, n1, "'%s' at %ld: message has '%s'", spec, world, n1);
	if (n2)
		like(err.text, n2, "'%s' at %ld: message has '%s'", spec, world,
		     n2);
}

static void
test_sizes(void)
{
	struct pl_layout l;

	if (parse("tp8,pp4", &l) == 0) {
		is_int(l.size[PL_TP], 8, "tp8");
		is_int(l.size[PL_PP], 4, "pp4");
		is_int(l.size[PL_CP], 1, "cp defaults to 1");
		is_int(l.size[PL_EP], 1, "ep defaults to 1");
		is_int(l.size[PL_DP], 0, "dp unresolved");
		ok(l.dp_auto, "dp is auto by default");
		is_int(l.order_kind, PL_ORDER_MEGATRON, "megatron by default");
		is_str(l.order_name, "megatron", "order name");
		ok(l.order[0] == PL_TP && l.order[1] == PL_CP &&
		   l.order[2] == PL_EP && l.order[3] == PL_DP &&
		   l.order[4] == PL_PP, "order is tp-cp-ep-dp-pp");
		is_int(layout_model_parallel(&l), 32, "model parallel 8*4");
	}
	if (parse("tp=8,pp=4,cp=2,ep=2,dp=3", &l) == 0) {
		is_int(l.size[PL_TP], 8, "tp=8");
		is_int(l.size[PL_PP], 4, "pp=4");
		is_int(l.size[PL_CP], 2, "cp=2");
		is_int(l.size[PL_EP], 2, "ep=2");
		is_int(l.size[PL_DP], 3, "dp=3");
		ok(!l.dp_auto, "explicit dp is not auto");
	}
	if (parse("tp4,cp2,pp8,dp=auto", &l) == 0) {
		ok(l.dp_auto, "dp=auto");
		is_int(l.size[PL_DP], 0, "dp=auto leaves dp 0");
	}
	if (parse("pp2", &l) == 0)
		is_int(l.size[PL_TP], 1, "tp defaults to 1");
	if (parse("tp1048576", &l) == 0)
		is_int(l.size[PL_TP], 1048576, "largest size accepted");
	if (parse("tp08", &l) == 0)
		is_int(l.size[PL_TP], 8, "leading zero");
}

static void
test_orders(void)
{
	struct pl_layout l;

	if (parse("tp8,pp4,order=megatron-tp-pp-dp", &l) == 0) {
		ok(l.order[0] == PL_TP && l.order[1] == PL_CP &&
		   l.order[2] == PL_EP && l.order[3] == PL_PP &&
		   l.order[4] == PL_DP, "megatron-tp-pp-dp is tp-cp-ep-pp-dp");
		is_str(l.order_name, "megatron-tp-pp-dp", "name kept");
		is_int(l.order_kind, PL_ORDER_MEGATRON, "megatron kind");
	}
	if (parse("tp2,order=torchtitan", &l) == 0) {
		is_int(l.order_kind, PL_ORDER_TORCHTITAN, "torchtitan kind");
		is_str(l.order_name, "torchtitan", "torchtitan name");
		ok(l.order[0] == PL_TP && l.order[4] == PL_PP,
		   "torchtitan: tp innermost, pp outermost");
	}
	if (parse("order=pp-dp-ep-cp-tp", &l) == 0) {
		ok(l.order[0] == PL_PP && l.order[1] == PL_DP &&
		   l.order[2] == PL_EP && l.order[3] == PL_CP &&
		   l.order[4] == PL_TP, "custom order kept innermost first");
		is_str(l.order_name, "pp-dp-ep-cp-tp", "custom name is text");
		is_int(l.order_kind, PL_ORDER_MEGATRON, "custom is megatron");
	}
	if (parse("order=tp-cp-ep-dp-pp", &l) == 0)
		is_str(l.order_name, "megatron", "spelled default is megatron");
	if (parse("order=tp-cp-ep-pp-dp", &l) == 0)
		is_str(l.order_name, "megatron-tp-pp-dp",
		       "spelled tp-pp-dp gets its preset name");
	if (parse("order=megatron", &l) == 0)
		is_str(l.order_name, "megatron", "order=megatron");
}

static void
test_model(void)
{
	struct pl_layout l;
	const struct pl_model *m;

	if (parse("tp8", &l) == 0) {
		ok(!l.have_model, "no model keys: have_model false");
		is_str(l.model.name, "7b", "default model is 7b");
		is_double(l.model.params, 7e9, 0, "7b params");
		is_int(l.seq, 4096, "seq default");
		is_int(l.mbs, 1, "mbs default");
		is_int(l.gbs, 0, "gbs default");
		is_int(l.zero, 0, "zero default");
		is_int(l.recompute, PL_RECOMPUTE_NONE, "recompute default");
		is_int(l.optimizer, PL_OPT_ADAM, "optimizer default");
	}
	/* Llama 2 7b/13b/70b and Llama 3.1 405b shapes. */
	m = layout_model_preset("7b");
	ok(m && m->hidden == 4096 && m->layers == 32 && m->heads == 32 &&
	   m->vocab == 32000 && m->params == 7e9, "7b preset");
	m = layout_model_preset("13b");
	ok(m && m->hidden == 5120 && m->layers == 40 && m->heads == 40 &&
	   m->vocab == 32000 && m->params == 13e9, "13b preset");
	m = layout_model_preset("70b");
	ok(m && m->hidden == 8192 && m->layers == 80 && m->heads == 64 &&
	   m->vocab == 32000 && m->params == 70e9, "70b preset");
	m = layout_model_preset("405b");
	ok(m && m->hidden == 16384 && m->layers == 126 && m->heads == 128 &&
	   m->vocab == 128256 && m->params == 405e9, "405b preset");
	ok(layout_model_preset("8b") == NULL, "no 8b preset");
	ok(layout_model_preset(NULL) == NULL, "NULL preset name");

	if (parse("tp8,model=70b", &l) == 0) {
		ok(l.have_model, "model=70b: have_model");
		is_str(l.model.name, "70b", "70b name");
		is_int(l.model.layers, 80, "70b layers");
	}
	if (parse("model=70B", &l) == 0)
		is_str(l.model.name, "70b", "model name is case-insensitive");
	if (parse("model=70b,layers=40", &l) == 0) {
		is_str(l.model.name, "70b", "override keeps preset name");
		is_int(l.model.layers, 40, "layers overridden");
		is_int(l.model.hidden, 8192, "hidden from preset");
		is_double(l.model.params, 70e9, 0, "params from preset");
	}
	if (parse("params=7e9", &l) == 0) {
		ok(l.have_model, "params= sets have_model");
		is_str(l.model.name, "custom", "params alone is custom");
		is_double(l.model.params, 7e9, 0, "7e9");
		is_int(l.model.hidden, 4096, "custom inherits 7b hidden");
	}
	if (parse("params=7000000000", &l) == 0)
		is_double(l.model.params, 7e9, 0, "7000000000");
	if (parse("params=7b", &l) == 0)
		is_double(l.model.params, 7e9, 0, "7b");
	if (parse("params=70B", &l) == 0)
		is_double(l.model.params, 70e9, 0, "70B");
	if (parse("params=1.5t", &l) == 0)
		is_double(l.model.params, 1.5e12, 0, "1.5t");
	if (parse("params=2.5e+9", &l) == 0)
		is_double(l.model.params, 2.5e9, 0, "2.5e+9");
	if (parse("params=350m", &l) == 0)
		is_double(l.model.params, 350e6, 0, "350m");
	/* 12*L*h^2 + 2*V*h = 12*2*1024*1024 + 2*1000*1024 = 27213824 */
	if (parse("hidden=1024,layers=2,heads=8,vocab=1000", &l) == 0) {
		is_str(l.model.name, "custom", "custom name");
		is_double(l.model.params, 27213824.0, 0,
			  "params estimated from the shape");
		is_int(l.model.heads, 8, "heads");
		is_int(l.model.vocab, 1000, "vocab");
	}
	if (parse("seq=8192,mbs=2,gbs=512,zero=1,recompute=selective,"
		  "optimizer=sgd", &l) == 0) {
		is_int(l.seq, 8192, "seq");
		is_int(l.mbs, 2, "mbs");
		is_int(l.gbs, 512, "gbs");
		is_int(l.zero, 1, "zero");
		is_int(l.recompute, PL_RECOMPUTE_SELECTIVE, "selective");
		is_int(l.optimizer, PL_OPT_SGD, "sgd");
	}
	if (parse("zero3,mbs4,recompute=full", &l) == 0) {
		is_int(l.zero, 3, "zero3 compact");
		is_int(l.mbs, 4, "mbs4 compact");
		is_int(l.recompute, PL_RECOMPUTE_FULL, "full");
	}
	if (parse("gbs=0", &l) == 0)
		is_int(l.gbs, 0, "gbs=0 means not pinned");
}

static void
test_errors(void)
{
	char huge[6000];

	bad(NULL, "empty layout spec", "tp8,pp4");
	bad("", "empty layout spec", "tp8,pp4");
	bad("tp0", "'tp0': tp must be a positive integer (e.g. tp8)", NULL);
	bad("tp=0", "'tp=0'", "positive integer");
	bad("pp-4", "'pp-4'", "pp must be a positive integer");
	bad("tp8x", "'tp8x'", "tp must be a positive integer");
	bad("cp=two", "'cp=two'", "cp must be a positive integer");
	bad("dp=+4", "'dp=+4'", "dp must be a positive integer");
	bad("ep=0x10", "'ep=0x10'", "positive integer");
	bad("tp1048577", "'tp1048577': tp is too large", "at most 1048576");
	bad("tp99999999999999999999999", "'tp99999999999999999999999'",
	    "at most 1048576");
	bad("seq=99999999999999999999", "'seq=99999999999999999999'",
	    "too large");
	bad("tp", "'tp': tp needs a value", "tp8");
	bad("order=", "'order=': order needs a value", "megatron-tp-pp-dp");
	bad("model=", "'model=': model needs a value", "405b");
	bad("tp8,tp4", "'tp4': tp is given twice", "'tp8'");
	bad("tp8,tp=8", "'tp=8': tp is given twice", NULL);
	bad("dp=auto,dp4", "'dp4': dp is given twice", "'dp=auto'");
	bad("model=7b,model=13b", "'model=13b': model is given twice", NULL);
	bad("tq8", "unknown key 'tq', did you mean 'tp'?", "accepted: tp,");
	bad("TP8", "unknown key 'TP', did you mean 'tp'?", NULL);
	bad("ordr=megatron", "did you mean 'order'?", "'ordr=megatron'");
	bad("layer=4", "did you mean 'layers'?", NULL);
	bad("foo=3", "'foo=3': unknown key 'foo' (accepted: tp, cp, ep, dp, "
	    "pp, order, model", NULL);
	bad("zz4", "unknown key 'zz' (accepted", NULL);
	bad("=4", "'=4': missing key", "accepted keys");
	bad("8", "'8': missing key", NULL);
	bad("tp8,,pp4", "empty item at position 5", "comma");
	bad("tp8,", "empty item at position 5", NULL);
	bad(",tp8", "empty item at position 1", NULL);
	bad("tp8, pp4", "whitespace 0x20 at position 5 after 'tp8,'",
	    "commas only");
	bad(" tp8", "whitespace 0x20 at position 1 (", NULL);
	bad("tp8\t", "whitespace 0x09 at position 4 after 'tp8'", NULL);
	bad("tp8,pp4\n", "whitespace 0x0A at position 8", NULL);
	bad("tp8,pp\xc3\xa9", "non-ASCII byte 0xC3 at position 7 after "
	    "'tp8,pp'", "plain ASCII");
	bad("\xff", "non-ASCII byte 0xFF at position 1", NULL);
	bad("tp8\x01", "control byte 0x01 at position 4", NULL);
	bad("order=tp-cp-dp-pp", "'order=tp-cp-dp-pp': ep is missing",
	    "megatron-tp-pp-dp, torchtitan");
	bad("order=tp-cp-ep-dp-tp", "tp appears twice", "e.g. tp-cp-ep-dp-pp");
	bad("order=tp-cp-xp-dp-pp", "unknown axis 'xp'", "torchtitan");
	bad("order=tp--cp-ep-dp-pp", "empty axis name", NULL);
	bad("order=tp-cp-ep-dp-pp-", "empty axis name", NULL);
	bad("order=Megatron", "unknown axis 'Megatron'", "megatron,");
	bad("order=megatron-pp-tp", "unknown axis 'megatron'", NULL);
	bad("model=8b", "'model=8b': unknown model", "7b, 13b, 70b, 405b");
	bad("model70b", "'model70b': write model as key=value", "model=70b");
	bad("params=abc", "'params=abc'", "7e9, 7000000000, 7b, 70B or 1.5t");
	bad("params=7x", "'params=7x'", "1.5t");
	bad("params=inf", "'params=inf'", NULL);
	bad("params=-7e9", "'params=-7e9'", NULL);
	bad("params=1e999", "params is too large", NULL);
	bad("params=0", "'params=0'", "positive number");
	bad("params=7e", "'params=7e'", NULL);
	bad("params=.5b", "'params=.5b'", NULL);
	bad("zero=4", "'zero=4': zero must be 0, 1, 2 or 3", NULL);
	bad("zero=-1", "'zero=-1': zero must be 0, 1, 2 or 3", NULL);
	bad("recompute=some", "'recompute=some'", "none, selective or full");
	bad("optimizer=lamb", "'optimizer=lamb'", "adam or sgd");
	bad("mbs=0", "'mbs=0': mbs must be a positive integer", NULL);
	bad("gbs=-1", "'gbs=-1': gbs must be a non-negative integer", NULL);
	bad("hidden=0", "'hidden=0'", "positive integer");
	bad("tp8,ep2,order=torchtitan", "'ep2': ep2 is not supported with "
	    "order=torchtitan", "order=megatron");
	memset(huge, 'a', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	bad(huge, "5999 bytes long", "at most 4096");
	memset(huge, '9', 3000);
	memcpy(huge, "tp=", 3);
	huge[3000] = '\0';
	bad(huge, "'tp=999999999", "...(3000 bytes)': tp is too large");
	memset(huge, 'q', 3000);
	memcpy(huge + 3000, "=1", 3);
	bad(huge, "unknown key 'qqqqq", NULL);
	{
		struct pl_layout l;
		pl_err_t err;

		pl_err_clear(&err);
		layout_parse(huge, &l, &err);
		ok(strlen(err.text) < 400, "a 3002-byte token is echoed clipped (%zu bytes)",
		   strlen(err.text));
		like(err.text, "...(3002 bytes)", "saying how long it was");
	}
	memset(huge, 'q', 3000);
	huge[3000] = ' ';
	huge[3001] = '\0';
	bad(huge, "whitespace 0x20 at position 3001 after '...qqq", NULL);
}

static void
test_resolve(void)
{
	struct pl_layout l;
	pl_err_t err;

	if (parse("tp8,pp4", &l) == 0) {
		pl_err_clear(&err);
		is_int(layout_resolve(&l, 64, &err), 0, "tp8,pp4 at 64");
		is_int(l.size[PL_DP], 2, "dp = 64/32");
		is_int(layout_world(&l), 64, "layout_world");
		ok(l.dp_auto, "still marked auto");
		/* Resolving again to another world recomputes dp. */
		is_int(layout_resolve(&l, 128, &err), 0, "re-resolve at 128");
		is_int(l.size[PL_DP], 4, "dp = 128/32");
	}
	if (parse("tp2,cp2,pp2,dp=2", &l) == 0) {
		pl_err_clear(&err);
		is_int(layout_resolve(&l, 16, &err), 0, "explicit dp matches");
	}
	if (parse("tp8,pp2,gbs=64,mbs=2", &l) == 0) {
		pl_err_clear(&err);
		is_int(layout_resolve(&l, 64, &err), 0, "gbs 64 = 2*4*8");
	}
	bad_resolve("tp8,pp2", 24, "world size 24 is not a multiple of "
		    "tp*cp*pp = 16 (tp8 x pp2)", NULL);
	bad_resolve("tp8,cp2", 24, "tp*cp*pp = 16 (tp8 x cp2)", NULL);
	bad_resolve("tp8,pp2", 0, "world size 0 must be positive", NULL);
	bad_resolve("tp8,pp2", -16, "world size -16 must be positive", NULL);
	bad_resolve("tp1", 100000000, "above the supported maximum", NULL);
	bad_resolve("tp8,pp2,dp2", 64, "tp*cp*pp*dp = 32 (tp8 x pp2 x dp2)",
		    "world size 64");
	bad_resolve("tp1048576,pp1048576,cp1048576", 64,
		    "not a multiple of tp*cp*pp", NULL);
	bad_resolve("tp1048576,pp1048576,cp1048576,dp1048576", 64,
		    "does not equal the world size 64", NULL);
	bad_resolve("tp4,gbs=100", 32, "gbs=100 is not divisible by "
		    "mbs*dp = 8", NULL);
	bad_resolve("tp4,gbs=100,mbs=3", 16, "gbs=100 is not divisible by "
		    "mbs*dp = 12", NULL);
	/* Megatron-Core: expert tp = tp, world % (tp*ep*pp) must be 0. */
	bad_resolve("tp2,ep8,pp2", 16, "world size 16 is not a multiple of "
		    "the expert tp*ep*pp = 32 (tp2 x ep8 x pp2", NULL);
	if (parse("tp2,ep4,pp2", &l) == 0) {
		pl_err_clear(&err);
		is_int(layout_resolve(&l, 16, &err), 0, "tp2,ep4,pp2 at 16");
		is_int(l.size[PL_DP], 4, "dense dp 4");
		is_int(layout_expert_dp(&l), 1, "expert dp 16/(2*4*2) = 1");
	}
	/*
	 * tp-pp-dp order: dense pp stride tp*cp, expert pp stride tp*ep; with
	 * pp > 1 Megatron asserts equal dp sizes (so ep = cp).
	 */
	bad_resolve("tp2,ep4,pp2,order=megatron-tp-pp-dp", 16,
		    "expert data parallel size (1) to equal dp (4)",
		    "ep = cp");
	if (parse("tp2,cp2,ep2,pp2,order=megatron-tp-pp-dp", &l) == 0) {
		pl_err_clear(&err);
		is_int(layout_resolve(&l, 16, &err), 0,
		       "tp-pp-dp with ep = cp is fine");
	}
	if (parse("tp2,ep4,order=megatron-tp-pp-dp", &l) == 0) {
		pl_err_clear(&err);
		is_int(layout_resolve(&l, 16, &err), 0,
		       "tp-pp-dp with pp1 allows any ep");
	}
	/* pp not last, dp sizes equal, but pp strides 2 (dense) vs 4. */
	bad_resolve("tp2,cp2,ep2,pp2,order=tp-ep-pp-cp-dp", 16,
		    "expert and dense pipeline groups", NULL);
}

/* parse(format(parse(s))) must give the same layout. */
static void
round_trip(const char *spec, const char *want)
{
	struct pl_layout a, b;
	char buf[256];
	pl_err_t err;
	int n;

	if (parse(spec, &a) < 0)
		return;
	n = layout_format(&a, buf, sizeof(buf));
	is_int(n, (long long)strlen(buf), "format length of '%s'", spec);
	is_str(buf, want, "format of '%s'", spec);
	pl_err_clear(&err);
	if (!ok(layout_parse(buf, &b, &err) == 0, "'%s' reparses", buf)) {
		diag("  %s", err.text);
		return;
	}
	ok(memcmp(a.size, b.size, sizeof(a.size)) == 0 &&
	   a.dp_auto == b.dp_auto &&
	   memcmp(a.order, b.order, sizeof(a.order)) == 0 &&
	   a.order_kind == b.order_kind &&
	   strcmp(a.order_name, b.order_name) == 0 &&
	   a.have_model == b.have_model &&
	   strcmp(a.model.name, b.model.name) == 0 &&
	   a.model.params == b.model.params &&
	   a.model.hidden == b.model.hidden &&
	   a.model.layers == b.model.layers &&
	   a.model.heads == b.model.heads &&
	   a.model.vocab == b.model.vocab && a.seq == b.seq &&
	   a.mbs == b.mbs && a.gbs == b.gbs && a.zero == b.zero &&
	   a.recompute == b.recompute && a.optimizer == b.optimizer &&
	   a.vpp == b.vpp && a.sp == b.sp && a.cp_algo == b.cp_algo &&
	   a.auto_layout == b.auto_layout && (!a.auto_layout || a.given == b.given),
	   "'%s' round-trips", spec);
}

static void
test_format(void)
{
	struct pl_layout l;
	char small[8];
	pl_err_t err;
	int n;

	round_trip("pp4,tp8", "tp8,pp4,order=megatron");
	round_trip("tp=4,cp=2,pp=8,dp=auto", "tp4,cp2,pp8,order=megatron");
	round_trip("dp2,tp2,ep2,order=tp-cp-ep-pp-dp",
		   "tp2,ep2,dp2,order=megatron-tp-pp-dp");
	round_trip("tp2,order=torchtitan", "tp2,order=torchtitan");
	round_trip("tp2,order=pp-dp-ep-cp-tp", "tp2,order=pp-dp-ep-cp-tp");
	round_trip("model=70b,layers=40,tp8",
		   "tp8,order=megatron,model=70b,layers=40");
	round_trip("params=1.5t", "tp1,order=megatron,params=1500000000000,"
		   "hidden=4096,layers=32,heads=32,vocab=32000");
	round_trip("tp8,model=405b,seq=8192,mbs=2,gbs=1024,zero=1,"
		   "recompute=selective,optimizer=sgd",
		   "tp8,order=megatron,model=405b,seq=8192,mbs=2,gbs=1024,"
		   "zero=1,recompute=selective,optimizer=sgd");
	if (parse("tp8,pp4", &l) == 0) {
		pl_err_clear(&err);
		layout_resolve(&l, 64, &err);
		n = layout_format(&l, small, sizeof(small));
		is_int(n, 26, "format returns the full length");
		is_str(small, "tp8,pp4", "truncated output is terminated");
		n = layout_format(&l, NULL, 0);
		is_int(n, 26, "NULL buffer just measures");
	}
}


static void
test_auto(void)
{
	struct pl_layout l;
	pl_err_t err;

	if (parse("auto,model=70b", &l) == 0) {
		ok(l.auto_layout, "auto,model=70b: auto");
		ok(l.size[PL_TP] == 0 && l.size[PL_CP] == 0 && l.size[PL_PP] == 0 &&
		   l.size[PL_DP] == 0 && l.size[PL_EP] == 0, "sizes not given are 0");
		is_int(l.given, 0, "nothing pinned");
		pl_err_clear(&err);
		ok(layout_resolve(&l, 64, &err) < 0, "resolve refuses an auto layout");
		like(err.text, "auto: the layout is chosen by the planner (plan_auto)",
		     "and says who chooses");
	}
	if (parse("auto,tp8,gbs=1024,zero=1", &l) == 0) {
		is_int(l.size[PL_TP], 8, "a pinned tp stays");
		is_int(l.given, PL_GIVEN_AXIS(PL_TP) | PL_GIVEN_GBS | PL_GIVEN_ZERO,
		       "given: tp, gbs, zero");
	}
	if (parse("auto,dp=auto,zero=0,recompute=none,vpp=1,sp=off,cp_algo=ring,mbs=1", &l) == 0)
		is_int(l.given, PL_GIVEN_ZERO | PL_GIVEN_RECOMPUTE | PL_GIVEN_VPP | PL_GIVEN_SP |
		       PL_GIVEN_CPALGO | PL_GIVEN_MBS, "defaults typed are pins; dp=auto is not");
	if (parse("tp8,pp4,vpp2,sp,cp_algo=ulysses,model=70b", &l) == 0) {
		is_int(l.vpp, 2, "vpp2");
		ok(l.sp && l.cp_algo == PL_CP_ULYSSES && !l.auto_layout, "sp, ulysses, not auto");
	}
	if (parse("tp2,sp=on", &l) == 0)
		ok(l.sp, "sp=on");
	if (parse("tp2", &l) == 0)
		ok(!l.sp && l.vpp == 1 && l.cp_algo == PL_CP_RING, "defaults: sp off, vpp1, ring");
	/* 126 layers on pp16: (126+2)/(16*4), the embedding and loss counted */
	if (parse("tp8,pp16,vpp4,model=405b", &l) == 0)
		is_int(l.vpp, 4, "405b, pp16, vpp4: the layers+2 split");
	bad("tp8,vpp2", "vpp=2 needs pp > 1", "accepted: vpp=1");
	bad("tp8,pp4,vpp3,model=70b", "pp*vpp = 4*3", "accepted");
	bad("tp8,cp8,cp_algo=ulysses,model=7b", "heads=32 do not divide by tp*cp = 8*8",
	    "cp_algo=ring");
	bad("cp_algo=tree", "cp_algo must be ring", "ulysses");
	bad("sp=maybe", "sp takes no value, on or off", NULL);
	bad("auto=1", "auto takes no value", NULL);
	bad("auto8", "auto takes no value", NULL);
	bad("auto,auto", "auto is given twice", NULL);
	bad("vpp0", "vpp must be a positive integer", NULL);
	bad("sp=", "sp needs a value after '='", NULL);
	round_trip("auto,model=70b", "auto,order=megatron,model=70b");
	round_trip("auto,tp8,gbs=1024,zero=1", "auto,tp8,order=megatron,gbs=1024,zero=1");
	round_trip("auto,zero=0,sp=off,vpp=1,recompute=none,cp_algo=ring,pp4,mbs=1",
		   "auto,pp4,order=megatron,mbs=1,zero=0,recompute=none,vpp=1,sp=off,cp_algo=ring");
	round_trip("tp8,pp16,vpp4,sp,cp2,cp_algo=ulysses,model=405b,seq=8192,gbs=2048,zero=1",
		   "tp8,cp2,pp16,order=megatron,model=405b,seq=8192,gbs=2048,zero=1,vpp=4,sp,"
		   "cp_algo=ulysses");
}

int
main(void)
{
	plan(446);
	test_sizes();
	test_orders();
	test_model();
	test_errors();
	test_resolve();
	test_format();
	test_auto();
	return done_testing();
}
