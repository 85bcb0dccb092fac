/* outmax.c - the largest |x| of CUDA module outputs, from the records of
 * their checks (outmax.h). */
#include <pthread.h>
#include <string.h>
#include "addr_slot.h"
#include "outmax.h"

struct waiter {
	uint64_t module;
	uint32_t step;
};

/* One check tag: its result, once come, or the modules waiting for it. */
struct join {
	uint64_t tag;                 /* 0: free */
	float max;
	uint8_t has_result;
	uint8_t nwait;
	struct waiter w[NP_OUTMAX_PER_TAG];
};

struct mod_max {
	uint64_t module;              /* 0: free */
	float max;
};

/* One step's maxima, and how many expected records are still to come. */
struct step_acc {
	uint32_t step;
	uint8_t used;
	uint8_t spoiled;              /* an expected record will never come */
	uint32_t waiting;
	uint32_t nmods;
	struct mod_max mods[NP_OUTMAX_MODULES];
};

static struct join joins[NP_OUTMAX_JOIN];
static struct step_acc steps[NP_OUTMAX_STEPS];
static uint64_t dropped;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void np_outmax_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(joins, 0, sizeof(joins));
	for (unsigned i = 0; i < NP_OUTMAX_STEPS; i++)
		steps[i].used = 0;
	pthread_mutex_unlock(&lock);
}

uint64_t np_outmax_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

static void step_clear(struct step_acc *s, uint32_t step)
{
	s->step = step;
	s->used = 1;
	s->spoiled = 0;
	s->waiting = 0;
	s->nmods = 0;
	memset(s->mods, 0, sizeof(s->mods));
}

/* The accumulator of `step`; with create, a slot an older step held is
 * taken (that step, never collected, is dropped).  NULL: gone, or a step
 * older than the one holding its slot. */
static struct step_acc *step_of(uint32_t step, int create)
{
	struct step_acc *s = &steps[step % NP_OUTMAX_STEPS];
	if (s->used && s->step == step)
		return s;
	if (!create || (s->used && s->step > step))
		return NULL;
	if (s->used)
		dropped++;
	step_clear(s, step);
	return s;
}

static void fold(struct step_acc *s, uint64_t module, float max)
{
	uint32_t h = np_addr_slot(module, NP_OUTMAX_MODULES);
	for (uint32_t i = 0; i < NP_OUTMAX_MODULES; i++, h = (h + 1) & (NP_OUTMAX_MODULES - 1)) {
		struct mod_max *m = &s->mods[h];
		if (m->module == module) {
			if (max > m->max || max != max)
				m->max = max;
			return;
		}
		if (!m->module) {
			if (s->nmods >= NP_OUTMAX_MODULES / 2)
				break;   /* keep probes short: the step is spoiled instead */
			m->module = module;
			m->max = max;
			s->nmods++;
			return;
		}
	}
	s->spoiled = 1;
	dropped++;
}

/* The modules waiting on j will not get its record: their steps are
 * spoiled, and no longer wait for it. */
static void abandon(struct join *j)
{
	for (unsigned i = 0; i < j->nwait; i++) {
		struct step_acc *s = step_of(j->w[i].step, 0);
		if (s) {
			s->waiting--;
			s->spoiled = 1;
		}
		dropped++;
	}
	j->nwait = 0;
}

void np_outmax_expect(uint64_t tag, uint64_t module, uint32_t step)
{
	if (!tag || !module)
		return;
	pthread_mutex_lock(&lock);
	struct step_acc *s = step_of(step, 1);
	struct join *j = &joins[tag & (NP_OUTMAX_JOIN - 1)];
	if (!s) {
		dropped++;
	} else if (j->tag == tag && j->has_result) {
		fold(s, module, j->max);
	} else if (j->tag > tag) {
		/* its record came and was overwritten, or never will */
		s->spoiled = 1;
		dropped++;
	} else {
		if (j->tag != tag) {
			abandon(j);
			*j = (struct join){ .tag = tag };
		}
		if (j->nwait < NP_OUTMAX_PER_TAG) {
			j->w[j->nwait++] = (struct waiter){ .module = module, .step = step };
			s->waiting++;
		} else {
			s->spoiled = 1;
			dropped++;
		}
	}
	pthread_mutex_unlock(&lock);
}

void np_outmax_value(uint64_t module, uint32_t step, float max)
{
	pthread_mutex_lock(&lock);
	struct step_acc *s = step_of(step, 1);
	if (s)
		fold(s, module, max);
	else
		dropped++;
	pthread_mutex_unlock(&lock);
}

void np_outmax_result(uint64_t tag, float max_abs)
{
	if (!tag)
		return;
	pthread_mutex_lock(&lock);
	struct join *j = &joins[tag & (NP_OUTMAX_JOIN - 1)];
	if (j->tag < tag) {
		abandon(j);   /* an older tag whose record never came */
		*j = (struct join){ .tag = tag };
	}
	if (j->tag == tag && !j->has_result) {
		for (unsigned i = 0; i < j->nwait; i++) {
			struct step_acc *s = step_of(j->w[i].step, 0);
			if (s) {
				fold(s, j->w[i].module, max_abs);
				s->waiting--;
			}
		}
		j->nwait = 0;
		j->has_result = 1;
		j->max = max_abs;
	}
	pthread_mutex_unlock(&lock);
}

uint32_t np_outmax_collect(uint32_t before, np_outmax_fn fn, void *arg)
{
	uint32_t given = 0;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct step_acc *oldest = NULL;
		for (unsigned i = 0; i < NP_OUTMAX_STEPS; i++) {
			struct step_acc *s = &steps[i];
			if (s->used && s->step < before && (!oldest || s->step < oldest->step))
				oldest = s;
		}
		if (!oldest)
			break;
		if (oldest->waiting && before - oldest->step <= NP_OUTMAX_STEPS)
			break;   /* still coming; later steps wait behind it */
		oldest->used = 0;
		if (oldest->waiting || oldest->spoiled) {
			dropped++;
			continue;
		}
		for (uint32_t k = 0; k < NP_OUTMAX_MODULES; k++)
			if (oldest->mods[k].module) {
				fn(oldest->mods[k].module, oldest->step, oldest->mods[k].max, arg);
				given++;
			}
	}
	pthread_mutex_unlock(&lock);
	return given;
}

uint32_t np_outmax_in_flight(uint32_t before)
{
	uint32_t n = 0;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < NP_OUTMAX_STEPS; i++)
		n += steps[i].used && steps[i].step < before;
	pthread_mutex_unlock(&lock);
	return n;
}

void np_outmax_give_up(uint32_t before)
{
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < NP_OUTMAX_STEPS; i++)
		if (steps[i].used && steps[i].step < before) {
			steps[i].used = 0;
			dropped++;
		}
	pthread_mutex_unlock(&lock);
}
