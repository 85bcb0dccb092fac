/* fake_cuda.c - a fake CUDA driver, built as libcuda.so.1, for running the
 * agent's CUDA side (cupti/) on a machine with no GPU (see fake.h).
 *
 * It exports every driver function cupti/cuda_api.c looks up, with the
 * real headers' prototypes, plus what a job needs to get going (cuInit,
 * the primary context, streams, allocations).  What matters to the agent
 * behaves as the real driver does:
 *  - launches go through the subscriber's callback at API enter and exit,
 *    for every enabled cbid, on the calling thread, nested calls included
 *    (the agent launches its checks from inside its exit callback);
 *  - kernels are queued on their stream and run later, in stream order,
 *    on the stream's own worker thread: nothing the agent launches may
 *    assume a kernel has run when cuLaunchKernel returns;
 *  - kernelParams are copied at launch, as the driver does (the caller's
 *    argument storage may be gone by the time the kernel runs);
 *  - CUkernel and CUfunction are different handles: cuFuncGetParamInfo
 *    fails on a CUkernel cast to a CUfunction, cuKernelGetParamInfo on a
 *    CUfunction;
 *  - a check kernel that would touch memory outside every allocation, or
 *    is launched with a shape finite_check.cu does not support, is a
 *    fault: counted, reported on stderr, and the kernel does not run (on
 *    a GPU it would kill the job's context);
 *  - a stream can capture a graph (cuStreamIsCapturing says so), whose
 *    launches, the agent's checks among them, run again at each
 *    cuGraphLaunch with the arguments they were captured with;
 *  - virtual memory as PyTorch's expandable segments use it: a range
 *    reserved (no access), chunks mapped into it and unmapped (cuMemMap,
 *    cuMemUnmap, traced); a check may span adjacent mapped chunks, and
 *    faults on a byte that is not mapped;
 *  - FAKE_CUDA_DEVICES=N (1 to 4, default 1) plays N devices, each with
 *    its primary context and legacy stream (the NULL handle is the current
 *    context's); device memory belongs to the device current at its
 *    allocation.  A kernel launched into a context that is not current,
 *    on a stream of another context, or with a function got in another
 *    context, is refused; a check kernel reading another device's memory
 *    is a fault (no peer access here: an illegal address on a GPU);
 *  - FAKE_CUDA_NO_IMAGE=1 plays a GPU the agent's fatbin has no code for,
 *    FAKE_CUDA_NO_LIST=1 a fatbin without the list check kernels;
 *  - FAKE_CUDA_DISCARD_CHECKS=1 counts the check kernels' launches and
 *    runs none (bench/bench_launch.c: the agent's host work per launch,
 *    without the worker thread's wake-ups that running them costs here).
 * The check kernels run as tests/check_emu.h emulates finite_check.cu:
 * block by block (last block first: any order must work; a list's
 * entries last first too), thread by thread, with the kernels' own
 * check_accum.h and gpu_ring.h.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "fake.h"
#include "../check_emu.h"

#define MAGIC_FUNC 0x434e5546u   /* "FUNC" */
#define MAGIC_KERN 0x4e52454bu   /* "KERN" */
#define MAGIC_STREAM 0x4d525453u
#define MAGIC_CTX 0x20585443u
#define MAGIC_LIB 0x2042494cu
#define MAGIC_GRAPH 0x48505247u
#define MAX_PARAMS 64
#define MAX_DEVICES 4            /* FAKE_CUDA_DEVICES at most */

#define CHECK_NAMES(prefix)                                                     \
	{ [NP_DT_F32] = prefix "f32", [NP_DT_F64] = prefix "f64",                  \
	  [NP_DT_F16] = prefix "f16", [NP_DT_BF16] = prefix "bf16",                \
	  [NP_DT_F8E4M3] = prefix "f8e4m3", [NP_DT_F8E5M2] = prefix "f8e5m2" }
static const char *const check_names[NP_DT_MAX] = CHECK_NAMES("np_check_");
static const char *const check_list_names[NP_DT_MAX] = CHECK_NAMES("np_check_list_");

/* A CUfunction, or a CUkernel (then `func` is its function). */
struct fk_func {
	uint32_t magic;
	struct fk_func *func;
	char *name;                /* mangled */
	int nparams;
	uint32_t off[MAX_PARAMS], size[MAX_PARAMS];
	uint32_t argbytes;         /* end of the last parameter */
	fake_kernel_fn fn;         /* a job kernel */
	int check_dtype;           /* a check kernel: enum np_dtype; else -1 */
	int check_list;            /* ... of a list (np_check_list_<dtype>) */
	struct fk_ctx *ctx;        /* a function got in a context (cuKernelGetFunction):
				    * launched in that one only; NULL: anywhere */
	struct fk_func *in_ctx[MAX_DEVICES]; /* a CUkernel's function in each device's context */
};

struct fk_ctx {
	uint32_t magic;
	CUdevice dev;
	uint32_t uid;
};

struct fk_op {
	struct fk_op *next;
	struct fk_func *f;         /* NULL: a memset */
	unsigned grid, block;
	unsigned rows;             /* a list check: gridDim.y, one entry each */
	void *args;
	unsigned char *dst;
	const unsigned char *src;  /* a copy, when set; else a memset */
	unsigned char val;
	size_t n;                  /* bytes (of each row) */
	size_t rows_2d;            /* a pitched copy or memset: rows of n bytes (0: one) */
	size_t dpitch, spitch;     /* bytes between rows, at dst and src */
	unsigned width;            /* a memset's element: 1 (val), 2 or 4 (pattern) */
	uint32_t pattern;
	int dev;                   /* the device it runs on (its stream's context's) */
};

struct fk_stream {
	uint32_t magic;
	struct fk_ctx *ctx;
	pthread_t worker;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fk_op *head, *tail;
	uint64_t queued, done;
	struct fk_op *cap_head, *cap_tail;   /* being captured: the graph's ops */
	int capturing;
	struct fk_stream *next_stream;
};

/* A captured graph, and its executable (the same ops, run per launch). */
struct fk_graph {
	uint32_t magic;
	struct fk_op *ops;
};

struct fk_lib {
	uint32_t magic;
	struct fk_func *kern[NP_DT_MAX];
	struct fk_func *kern_list[NP_DT_MAX];
};

struct fk_alloc {
	uintptr_t base;
	size_t len;
	int host;                  /* cuMemHostAlloc */
	int dev;                   /* device memory: its device; -1 any (host, mapped) */
	struct fk_alloc *next;
};

static int initialized;
static struct fk_ctx primary[MAX_DEVICES] = {
	{ MAGIC_CTX, 0, 1 }, { MAGIC_CTX, 1, 2 }, { MAGIC_CTX, 2, 3 }, { MAGIC_CTX, 3, 4 },
};
static int ndevices = 1;                   /* FAKE_CUDA_DEVICES */
static __thread struct fk_ctx *current;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fk_stream *streams;          /* every stream, for cuCtxSynchronize */
static struct fk_stream *legacy[MAX_DEVICES];   /* each context's NULL stream */
static struct fk_alloc *allocs;
static struct fake_cuda_stats stats;
static uint64_t faults;
static uint32_t correlation;

/* the subscriber (fake_cupti.c) */
static CUpti_CallbackFunc sub_cb;
static void *sub_ud;
static volatile unsigned char cb_on[CUPTI_DRIVER_TRACE_CBID_SIZE];

#define COUNT(field) __atomic_add_fetch(&stats.field, 1, __ATOMIC_RELAXED)

/* What would kill the job's context on a GPU: counted and said. */
__attribute__((format(printf, 1, 2)))
static void fault(const char *fmt, ...)
{
	va_list ap;
	__atomic_add_fetch(&faults, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "fake cuda: FAULT: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the subscriber ---- */

void fake_cuda_set_subscriber(CUpti_CallbackFunc cb, void *userdata)
{
	sub_ud = userdata;
	__atomic_store_n(&sub_cb, cb, __ATOMIC_RELEASE);
	if (!cb)
		memset((void *)cb_on, 0, sizeof(cb_on));
}

void fake_cuda_enable_cbid(CUpti_CallbackId cbid, int on)
{
	if (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		cb_on[cbid] = (unsigned char)!!on;
}

static int refused;

void fake_cuda_note_refused(void)
{
	__atomic_add_fetch(&refused, 1, __ATOMIC_RELEASE);
}

int fake_cuda_refused(void)
{
	return __atomic_load_n(&refused, __ATOMIC_ACQUIRE);
}

int fake_cuda_subscribed(void)
{
	if (!__atomic_load_n(&sub_cb, __ATOMIC_ACQUIRE))
		return 0;
	for (size_t i = 0; i < sizeof(cb_on); i++)
		if (cb_on[i])
			return 1;
	return 0;
}

/* One API call's enter or exit, as CUPTI delivers it in the driver
 * domain: on the calling thread, with the call's own parameter struct
 * and return value. */
static void api_callback(CUpti_CallbackId cbid, const char *fn, CUpti_ApiCallbackSite site,
			 const void *params, CUresult *ret, const char *symbol, uint32_t corr,
			 uint64_t *corr_data)
{
	CUpti_CallbackFunc cb = __atomic_load_n(&sub_cb, __ATOMIC_ACQUIRE);
	if (!cb || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE || !cb_on[cbid])
		return;
	CUpti_CallbackData d = {
		.callbackSite = site,
		.functionName = fn,
		.functionParams = params,
		.functionReturnValue = ret,
		.symbolName = symbol,
		.context = (CUcontext)current,
		.contextUid = current ? current->uid : 0,
		.correlationData = corr_data,
		.correlationId = corr,
	};
	COUNT(callbacks);
	cb(sub_ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
}

/* Runs `call` between the enter and exit callbacks of cbid. */
#define TRACED(cbid, name, params, symbol, call)                                       \
	({                                                                             \
		CUresult ret_ = CUDA_SUCCESS;                                          \
		uint64_t cdata_ = 0;                                                   \
		uint32_t corr_ = __atomic_add_fetch(&correlation, 1, __ATOMIC_RELAXED); \
		api_callback(cbid, name, CUPTI_API_ENTER, params, &ret_, symbol, corr_, \
			     &cdata_);                                                 \
		ret_ = (call);                                                         \
		api_callback(cbid, name, CUPTI_API_EXIT, params, &ret_, symbol, corr_,  \
			     &cdata_);                                                 \
		ret_;                                                                  \
	})

/* ---- allocations ---- */

/* Device memory is not in a forked child's address space, and neither is
 * pinned memory (the driver marks it MADV_DONTFORK): the same here, so a
 * child touching either faults as it would with a GPU. */
static void *map(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n ? n : 1, MADV_DONTFORK);
	return p;
}

static void alloc_add(void *p, size_t n, int host)
{
	struct fk_alloc *a = calloc(1, sizeof(*a));
	a->base = (uintptr_t)p;
	a->len = n;
	a->host = host;
	a->dev = !host && current ? (int)current->dev : -1;
	pthread_mutex_lock(&lock);
	a->next = allocs;
	allocs = a;
	pthread_mutex_unlock(&lock);
}

/* The allocation holding [p, p + n), or NULL. */
static struct fk_alloc *alloc_find(uintptr_t p, size_t n)
{
	struct fk_alloc *a;
	pthread_mutex_lock(&lock);
	for (a = allocs; a; a = a->next)
		if (p >= a->base && p - a->base < a->len && n <= a->len - (p - a->base))
			break;
	pthread_mutex_unlock(&lock);
	return a;
}

static int any_capturing(void);

/* Whether every byte of [p, p + n) is in an allocation: adjacent mapped
 * chunks of a reserved range hold one tensor together, as on a GPU. */
static int mapped(uintptr_t p, size_t n)
{
	while (n) {
		struct fk_alloc *a = alloc_find(p, 1);
		if (!a)
			return 0;
		size_t here = a->base + a->len - p;
		if (here >= n)
			return 1;
		p += here;
		n -= here;
	}
	return 1;
}

static CUresult mem_alloc(CUdeviceptr *dptr, size_t n)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	/* a global-mode capture forbids allocating, from any thread */
	if (any_capturing()) {
		fault("cuMemAlloc of %zu bytes while a stream captures", n);
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!dptr || !n)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = map(n);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	alloc_add(p, n, 0);
	*dptr = (CUdeviceptr)p;
	COUNT(allocs);
	return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	cuMemAlloc_v2_params p = { dptr, bytesize };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2", &p, NULL,
		      mem_alloc(dptr, bytesize));
}

static CUresult mem_free(CUdeviceptr d)
{
	struct fk_alloc **pp, *a = NULL;
	pthread_mutex_lock(&lock);
	for (pp = &allocs; *pp; pp = &(*pp)->next) {
		if ((*pp)->base == d && !(*pp)->host) {
			a = *pp;
			*pp = a->next;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	munmap((void *)a->base, a->len);
	free(a);
	return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	cuMemFree_v2_params p = { dptr };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, "cuMemFree_v2", &p, NULL,
		      mem_free(dptr));
}

/* ---- virtual memory: reserve, map chunks, unmap ---- */

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			     unsigned long long flags)
{
	(void)alignment, (void)addr, (void)flags;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ptr || !size)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ptr = (CUdeviceptr)p;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	return munmap((void *)ptr, size) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* The handle is not looked at: the fake's physical memory is the range's. */
static CUresult mem_map(CUdeviceptr ptr, size_t size)
{
	if (!ptr || !size || mprotect((void *)ptr, size, PROT_READ | PROT_WRITE))
		return CUDA_ERROR_INVALID_VALUE;
	alloc_add((void *)ptr, size, 0);
	return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
		  unsigned long long flags)
{
	cuMemMap_params p = { ptr, size, offset, handle, flags };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemMap, "cuMemMap", &p, NULL, mem_map(ptr, size));
}

/* Every mapped chunk inside [ptr, ptr + size) goes, and its pages with it. */
static CUresult mem_unmap(CUdeviceptr ptr, size_t size)
{
	struct fk_alloc **pp = &allocs, *a;
	int n = 0;
	pthread_mutex_lock(&lock);
	while ((a = *pp)) {
		if (!a->host && a->base >= ptr && a->base - ptr < size) {
			*pp = a->next;
			free(a);
			n++;
		} else {
			pp = &a->next;
		}
	}
	pthread_mutex_unlock(&lock);
	if (!n || mprotect((void *)ptr, size, PROT_NONE))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	cuMemUnmap_params p = { ptr, size };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, "cuMemUnmap", &p, NULL,
		      mem_unmap(ptr, size));
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = map(bytesize);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* only memory asked DEVICEMAP may be mapped later */
	alloc_add(p, bytesize, flags & CU_MEMHOSTALLOC_DEVICEMAP ? 1 : 2);
	*pp = p;
	return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int flags)
{
	struct fk_alloc *a = alloc_find((uintptr_t)p, 1);
	if (!pdptr || flags || !a || a->host != 1)
		return CUDA_ERROR_INVALID_VALUE;
	*pdptr = (CUdeviceptr)p;   /* unified addressing */
	return CUDA_SUCCESS;
}

/* Only the device a pointer's memory is on. */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	struct fk_alloc *a = alloc_find(ptr, 1);
	if (!data || attribute != CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!a || a->dev < 0)
		return CUDA_ERROR_INVALID_VALUE;
	*(int *)data = a->dev;
	return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	struct fk_alloc *a = alloc_find(dptr, 1);
	if (!a || a->host)
		return CUDA_ERROR_NOT_FOUND;
	if (pbase)
		*pbase = a->base;
	if (psize)
		*psize = a->len;
	return CUDA_SUCCESS;
}

/* ---- streams ---- */

static void run_check(struct fk_op *op);

/* A copy or memset, one row or rows_2d of them */
static void run_transfer(const struct fk_op *op)
{
	for (size_t r = 0; r < (op->rows_2d ? op->rows_2d : 1); r++) {
		unsigned char *d = op->dst + r * op->dpitch;
		if (op->src)
			memcpy(d, op->src + r * op->spitch, op->n);
		else if (op->width == 2)
			for (size_t i = 0; i + 2 <= op->n; i += 2)
				memcpy(d + i, &(uint16_t){ (uint16_t)op->pattern }, 2);
		else if (op->width == 4)
			for (size_t i = 0; i + 4 <= op->n; i += 4)
				memcpy(d + i, &op->pattern, 4);
		else
			memset(d, op->val, op->n);
	}
}

static void *worker_main(void *arg)
{
	struct fk_stream *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head)
			pthread_cond_wait(&s->cond, &s->lock);
		struct fk_op *op = s->head;
		pthread_mutex_unlock(&s->lock);
		if (!op->f)
			run_transfer(op);
		else if (op->f->check_dtype >= 0)
			run_check(op);
		else
			op->f->fn(op->args, op->grid, op->block);
		pthread_mutex_lock(&s->lock);
		/* dequeued only once done: synchronize waits for the op itself */
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		s->done++;
		pthread_cond_broadcast(&s->cond);
		free(op->args);
		free(op);
	}
	return NULL;
}

static struct fk_stream *stream_new(struct fk_ctx *ctx)
{
	struct fk_stream *s = calloc(1, sizeof(*s));
	s->magic = MAGIC_STREAM;
	s->ctx = ctx;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (pthread_create(&s->worker, NULL, worker_main, s)) {
		free(s);
		return NULL;
	}
	pthread_detach(s->worker);
	pthread_mutex_lock(&lock);
	s->next_stream = streams;
	streams = s;
	pthread_mutex_unlock(&lock);
	return s;
}

/* A stream handle as the API takes it: NULL and the legacy and
 * per-thread handles are the one default stream here. */
static struct fk_stream *stream_of(CUstream h)
{
	if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		struct fk_ctx *ctx = current ? current : &primary[0];
		struct fk_stream **l = &legacy[ctx->dev];
		pthread_mutex_lock(&lock);
		struct fk_stream *s = *l;
		pthread_mutex_unlock(&lock);
		if (!s) {
			s = stream_new(ctx);
			pthread_mutex_lock(&lock);
			if (!*l)
				*l = s;   /* a racing creator's stream just stays idle */
			s = *l;
			pthread_mutex_unlock(&lock);
		}
		return s;
	}
	struct fk_stream *s = (struct fk_stream *)h;
	return s->magic == MAGIC_STREAM ? s : NULL;
}

/* Queues op on s, or, while s captures, adds it to the graph. */
static void enqueue(struct fk_stream *s, struct fk_op *op)
{
	pthread_mutex_lock(&s->lock);
	if (s->capturing) {
		if (s->cap_tail)
			s->cap_tail->next = op;
		else
			s->cap_head = op;
		s->cap_tail = op;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	s->queued++;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void stream_wait(struct fk_stream *s)
{
	pthread_mutex_lock(&s->lock);
	uint64_t want = s->queued;
	while (s->done < want)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!ph || flags & ~(unsigned)CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	struct fk_stream *s = stream_new(current);
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ph = (CUstream)s;
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream h)
{
	struct fk_stream *s = h ? stream_of(h) : NULL;
	if (!s || s == legacy[s->ctx->dev])
		return CUDA_ERROR_INVALID_HANDLE;
	/* the worker and its queue stay: work queued before destroy still runs */
	return CUDA_SUCCESS;
}

static CUresult stream_sync(CUstream h)
{
	struct fk_stream *s = stream_of(h);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	stream_wait(s);
	return CUDA_SUCCESS;
}

/* traced, as the agent's deferred checks are launched before it (defer.h) */
CUresult cuStreamSynchronize(CUstream h)
{
	cuStreamSynchronize_params p = { h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, "cuStreamSynchronize", &p, NULL,
		      stream_sync(h));
}

static CUresult ctx_sync(void)
{
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&lock);
	struct fk_stream *list = streams;
	pthread_mutex_unlock(&lock);
	for (struct fk_stream *s = list; s; s = s->next_stream)
		stream_wait(s);
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", NULL, NULL,
		      ctx_sync());
}

CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *status)
{
	struct fk_stream *s = stream_of(h);
	if (!s || !status)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&s->lock);
	*status = s->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	pthread_mutex_unlock(&s->lock);
	return CUDA_SUCCESS;
}

/* ---- graphs: what a stream captures, replayed by cuGraphLaunch ---- */

static int any_capturing(void)
{
	int n = 0;
	pthread_mutex_lock(&lock);
	for (struct fk_stream *s = streams; s; s = s->next_stream)
		n += __atomic_load_n(&s->capturing, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
	return n;
}

static CUresult begin_capture(CUstream h)
{
	struct fk_stream *s = stream_of(h);
	if (!s || s == legacy[s->ctx->dev])
		return CUDA_ERROR_INVALID_VALUE;   /* the legacy stream cannot capture */
	pthread_mutex_lock(&s->lock);
	int was = s->capturing;
	__atomic_store_n(&s->capturing, 1, __ATOMIC_RELAXED);
	s->cap_head = s->cap_tail = NULL;
	pthread_mutex_unlock(&s->lock);
	return was ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
}

CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode mode)
{
	cuStreamBeginCapture_v2_params p = { h, mode };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, "cuStreamBeginCapture_v2",
		      &p, NULL, begin_capture(h));
}

CUresult cuStreamEndCapture(CUstream h, CUgraph *pgraph)
{
	struct fk_stream *s = stream_of(h);
	if (!s || !pgraph)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&s->lock);
	if (!s->capturing) {
		pthread_mutex_unlock(&s->lock);
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	struct fk_graph *g = calloc(1, sizeof(*g));
	g->magic = MAGIC_GRAPH;
	g->ops = s->cap_head;
	__atomic_store_n(&s->capturing, 0, __ATOMIC_RELAXED);
	s->cap_head = s->cap_tail = NULL;
	pthread_mutex_unlock(&s->lock);
	*pgraph = (CUgraph)g;
	return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *pexec, CUgraph graph, unsigned long long flags)
{
	struct fk_graph *g = (struct fk_graph *)graph;
	if (!pexec || !g || g->magic != MAGIC_GRAPH)
		return CUDA_ERROR_INVALID_VALUE;
	*pexec = (CUgraphExec)g;   /* ops are copied at each launch */
	return CUDA_SUCCESS;
}

/* Each launch runs copies of the captured ops, with the arguments they
 * were captured with (a check's tag and scratch slot included). */
static CUresult graph_launch(struct fk_graph *g, CUstream h)
{
	struct fk_stream *s = stream_of(h);
	if (!g || g->magic != MAGIC_GRAPH || !s)
		return CUDA_ERROR_INVALID_VALUE;
	for (struct fk_op *o = g->ops; o; o = o->next) {
		struct fk_op *op = malloc(sizeof(*op));
		*op = *o;
		op->next = NULL;
		if (o->args) {
			size_t n = o->f->argbytes + 1;
			op->args = malloc(n);
			memcpy(op->args, o->args, n);
		}
		enqueue(s, op);
	}
	return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream h)
{
	cuGraphLaunch_params p = { exec, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch", &p, NULL,
		      graph_launch((struct fk_graph *)exec, h));
}

CUresult cuStreamGetCtx(CUstream h, CUcontext *pctx)
{
	struct fk_stream *s = stream_of(h);
	if (!s || !pctx)
		return CUDA_ERROR_INVALID_HANDLE;
	*pctx = (CUcontext)s->ctx;
	return CUDA_SUCCESS;
}

/* ---- copies and memsets the agent does not check (cupti/driver_writes.h) ---- */

/* Whether [p, p + n) is device memory (not pinned host memory) */
static int device_range(uintptr_t p, size_t n)
{
	struct fk_alloc *a = alloc_find(p, n);
	return a && !a->host;
}

/* The bytes rows of width bytes, pitch apart, span */
static size_t pitched_span(size_t pitch, size_t width, size_t rows)
{
	return rows ? (rows - 1) * pitch + width : 0;
}

/* Enqueues rows of n bytes from src (a memset of pattern's width bytes
 * when src is NULL) to dst on stream h. */
static CUresult transfer(CUstream h, uintptr_t dst, uintptr_t src, size_t n, size_t rows,
			 size_t dpitch, size_t spitch, unsigned width, uint32_t pattern)
{
	struct fk_stream *s = stream_of(h);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	struct fk_op *op = calloc(1, sizeof(*op));
	op->dst = (unsigned char *)dst;
	op->src = (const unsigned char *)src;
	op->n = n;
	op->rows_2d = rows;
	op->dpitch = dpitch;
	op->spitch = spitch;
	op->width = width;
	op->val = (unsigned char)pattern;
	op->pattern = pattern;
	enqueue(s, op);
	return CUDA_SUCCESS;
}

static CUresult memset_async(CUdeviceptr d, uint32_t v, unsigned width, size_t count, CUstream h)
{
	if (!device_range(d, count * width))
		return CUDA_ERROR_INVALID_VALUE;
	return transfer(h, d, 0, count * width, 1, 0, 0, width, v);
}

CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char uc, size_t n, CUstream h)
{
	cuMemsetD8Async_params p = { d, uc, n, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, "cuMemsetD8Async", &p, NULL,
		      memset_async(d, uc, 1, n, h));
}

CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int ui, size_t n, CUstream h)
{
	cuMemsetD32Async_params p = { d, ui, n, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, "cuMemsetD32Async", &p, NULL,
		      memset_async(d, ui, 4, n, h));
}

static CUresult memset_2d(CUdeviceptr d, size_t pitch, uint32_t v, unsigned width, size_t w,
			  size_t rows, CUstream h)
{
	if (!device_range(d, pitched_span(pitch, w * width, rows)))
		return CUDA_ERROR_INVALID_VALUE;
	return transfer(h, d, 0, w * width, rows, pitch, 0, width, v);
}

CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int ui, size_t w, size_t rows,
			    CUstream h)
{
	cuMemsetD2D32Async_params p = { d, pitch, ui, w, rows, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async, "cuMemsetD2D32Async", &p, NULL,
		      memset_2d(d, pitch, ui, 4, w, rows, h));
}

static CUresult copy_htod(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
	if (!device_range(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	return transfer(h, dst, (uintptr_t)src, n, 1, 0, 0, 0, 0);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
	cuMemcpyHtoDAsync_v2_params p = { dst, src, n, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", &p,
		      NULL, copy_htod(dst, src, n, h));
}

/* One end of a 2D or 3D copy: its address (host and device share one
 * address space here), 0 for an array, which the fake has not */
static uintptr_t end_of(CUmemorytype type, const void *host, CUdeviceptr device)
{
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		return (uintptr_t)host;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		return device;
	default:
		return 0;
	}
}

/* depth slices (slice_rows rows apart at each end) of a pitched copy */
static CUresult copy_3d(CUstream h, CUmemorytype dtype, uintptr_t dst, size_t dpitch,
			size_t dslice, CUmemorytype stype, uintptr_t src, size_t spitch,
			size_t sslice, size_t width, size_t rows, size_t depth)
{
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	size_t dspan = depth ? (depth - 1) * dslice * dpitch + pitched_span(dpitch, width, rows) : 0;
	size_t sspan = depth ? (depth - 1) * sslice * spitch + pitched_span(spitch, width, rows) : 0;
	if ((dtype != CU_MEMORYTYPE_HOST && !device_range(dst, dspan)) ||
	    (stype != CU_MEMORYTYPE_HOST && !device_range(src, sspan)))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t z = 0; z < depth; z++) {
		CUresult r = transfer(h, dst + z * dslice * dpitch, src + z * sslice * spitch, width,
				      rows, dpitch, spitch, 0, 0);
		if (r != CUDA_SUCCESS)
			return r;
	}
	return CUDA_SUCCESS;
}

static CUresult copy_3d_async(const CUDA_MEMCPY3D *c, CUstream h)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	uintptr_t d = end_of(c->dstMemoryType, c->dstHost, c->dstDevice);
	uintptr_t s = end_of(c->srcMemoryType, c->srcHost, c->srcDevice);
	if (!d || !s)
		return CUDA_ERROR_INVALID_VALUE;
	d += (c->dstZ * c->dstHeight + c->dstY) * c->dstPitch + c->dstXInBytes;
	s += (c->srcZ * c->srcHeight + c->srcY) * c->srcPitch + c->srcXInBytes;
	return copy_3d(h, c->dstMemoryType, d, c->dstPitch, c->dstHeight, c->srcMemoryType, s,
		       c->srcPitch, c->srcHeight, c->WidthInBytes, c->Height, c->Depth);
}

CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *c, CUstream h)
{
	cuMemcpy3DAsync_v2_params p = { c, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2, "cuMemcpy3DAsync_v2", &p, NULL,
		      copy_3d_async(c, h));
}

/* a 2D copy: a 3D copy of one slice */
static CUresult copy_2d_async(const CUDA_MEMCPY2D *c, CUstream h)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_MEMCPY3D t = {
		.srcXInBytes = c->srcXInBytes, .srcY = c->srcY, .srcMemoryType = c->srcMemoryType,
		.srcHost = c->srcHost, .srcDevice = c->srcDevice, .srcPitch = c->srcPitch,
		.dstXInBytes = c->dstXInBytes, .dstY = c->dstY, .dstMemoryType = c->dstMemoryType,
		.dstHost = c->dstHost, .dstDevice = c->dstDevice, .dstPitch = c->dstPitch,
		.WidthInBytes = c->WidthInBytes, .Height = c->Height, .Depth = 1,
	};
	return copy_3d_async(&t, h);
}

CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream h)
{
	cuMemcpy2DAsync_v2_params p = { c, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2, "cuMemcpy2DAsync_v2", &p, NULL,
		      copy_2d_async(c, h));
}

/* Each copy either way (the attributes' hints are not read) */
static CUresult copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
			   CUstream h)
{
	if (!dsts || !srcs || !sizes || !count)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++) {
		CUresult r = transfer(h, dsts[i], srcs[i], sizes[i], 1, 0, 0, 0, 0);
		if (r != CUDA_SUCCESS)
			return r;
	}
	return CUDA_SUCCESS;
}

CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
			       CUmemcpyAttributes *attrs, size_t *attrs_idx, size_t nattrs,
			       CUstream h)
{
	cuMemcpyBatchAsync_v2_params p = { dsts, srcs, sizes, count, attrs, attrs_idx, nattrs, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2, "cuMemcpyBatchAsync_v2", &p,
		      NULL, copy_batch(dsts, srcs, sizes, count, h));
}

/* A pointer operand's memory: the fake's device memory, else the host's */
static CUmemorytype memory_of(CUdeviceptr p)
{
	return device_range(p, 1) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
}

/* Each copy between pointers (extents in bytes; rows rowLength apart, 0:
 * packed, layers layerHeight rows); arrays are not faked */
static CUresult copy_3d_batch(size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, CUstream h)
{
	if (!ops || !n)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++) {
		const CUDA_MEMCPY3D_BATCH_OP *o = &ops[i];
		if (o->dst.type != CU_MEMCPY_OPERAND_TYPE_POINTER ||
		    o->src.type != CU_MEMCPY_OPERAND_TYPE_POINTER)
			return CUDA_ERROR_NOT_SUPPORTED;
		const CUextent3D *e = &o->extent;
		size_t dp = o->dst.op.ptr.rowLength ? o->dst.op.ptr.rowLength : e->width;
		size_t dl = o->dst.op.ptr.layerHeight ? o->dst.op.ptr.layerHeight : e->height;
		size_t sp = o->src.op.ptr.rowLength ? o->src.op.ptr.rowLength : e->width;
		size_t sl = o->src.op.ptr.layerHeight ? o->src.op.ptr.layerHeight : e->height;
		CUresult r = copy_3d(h, memory_of(o->dst.op.ptr.ptr), o->dst.op.ptr.ptr, dp, dl,
				     memory_of(o->src.op.ptr.ptr), o->src.op.ptr.ptr, sp, sl, e->width,
				     e->height, e->depth);
		if (r != CUDA_SUCCESS)
			return r;
	}
	return CUDA_SUCCESS;
}

CUresult cuMemcpy3DBatchAsync_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
				 CUstream h)
{
	cuMemcpy3DBatchAsync_v2_params p = { n, ops, flags, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_v2, "cuMemcpy3DBatchAsync_v2", &p,
		      NULL, copy_3d_batch(n, ops, h));
}

static CUresult copy_dtoh_async(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
	struct fk_stream *s = stream_of(h);
	if (!s || !alloc_find(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	struct fk_op *op = calloc(1, sizeof(*op));
	op->dst = dst;
	op->src = (const unsigned char *)src;
	op->n = n;
	enqueue(s, op);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
	cuMemcpyDtoHAsync_v2_params p = { dst, src, n, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2", &p,
		      NULL, copy_dtoh_async(dst, src, n, h));
}

/* A device-to-device copy on stream h, after what is queued there: both
 * ranges must be device memory. */
static CUresult copy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
	struct fk_stream *s = stream_of(h);
	struct fk_alloc *d = alloc_find(dst, n), *a = alloc_find(src, n);
	if (!s || !d || !a || d->host || a->host)
		return CUDA_ERROR_INVALID_VALUE;
	struct fk_op *op = calloc(1, sizeof(*op));
	op->dst = (unsigned char *)dst;
	op->src = (const unsigned char *)src;
	op->n = n;
	enqueue(s, op);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
	cuMemcpyDtoDAsync_v2_params p = { dst, src, n, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2", &p, NULL,
		      copy_dtod(dst, src, n, h));
}

/* Unified addressing: what cudaMemcpyAsync(.., cudaMemcpyDeviceToDevice)
 * becomes.  The fake copies device memory only. */
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
	cuMemcpyAsync_params p = { dst, src, n, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, "cuMemcpyAsync", &p, NULL,
		      copy_dtod(dst, src, n, h));
}

/* Between devices' contexts (cudaMemcpyPeerAsync): the same copy here. */
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
			   size_t n, CUstream h)
{
	cuMemcpyPeerAsync_params p = { dst, dst_ctx, src, src_ctx, n, h };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync, "cuMemcpyPeerAsync", &p, NULL,
		      copy_dtod(dst, src, n, h));
}

/* Only recorded: the fake has no capture modes to enforce. */
static __thread CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode old = capture_mode;
	capture_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

static CUresult copy_dtoh(void *dst, CUdeviceptr src, size_t n)
{
	/* synchronous: after the work queued so far, as the legacy stream */
	if (ctx_sync() != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!alloc_find(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, (const void *)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	cuMemcpyDtoH_v2_params p = { dst, src, n };
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2", &p, NULL,
		      copy_dtoh(dst, src, n));
}

/* ---- init, devices, contexts ---- */

CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	const char *n = getenv("FAKE_CUDA_DEVICES");
	if (n && atoi(n) >= 1 && atoi(n) <= MAX_DEVICES)
		ndevices = atoi(n);
	initialized = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*count = ndevices;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ordinal < 0 || ordinal >= ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= ndevices || !pi)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; break;   /* an H100 */
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= ndevices || !pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)&primary[dev];
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return dev >= 0 && dev < ndevices ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ctx && ((struct fk_ctx *)ctx)->magic != MAGIC_CTX)
		return CUDA_ERROR_INVALID_CONTEXT;
	current = (struct fk_ctx *)ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*pctx = (CUcontext)current;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *dev)
{
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = current->dev;
	return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult r, const char **s)
{
	static const struct { CUresult r; const char *s; } names[] = {
		{ CUDA_SUCCESS, "CUDA_SUCCESS" },
		{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE" },
		{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY" },
		{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED" },
		{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE" },
		{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE" },
		{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT" },
		{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE" },
		{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND" },
		{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS" },
		{ CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED" },
		{ CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU" },
		{ CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].r == r) {
			*s = names[i].s;
			return CUDA_SUCCESS;
		}
	}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

/* ---- functions, kernels, libraries ---- */

static struct fk_func *func_new(const char *name, int nparams, const uint32_t *off,
				const uint32_t *size)
{
	struct fk_func *f = calloc(1, sizeof(*f));
	f->magic = MAGIC_FUNC;
	f->func = f;
	f->name = strdup(name);
	f->nparams = nparams;
	f->check_dtype = -1;
	for (int i = 0; i < nparams && i < MAX_PARAMS; i++) {
		f->off[i] = off[i];
		f->size[i] = size[i];
		if (off[i] + size[i] > f->argbytes)
			f->argbytes = off[i] + size[i];
	}
	return f;
}

/* The CUkernel of function f. */
static struct fk_func *kernel_of(struct fk_func *f)
{
	struct fk_func *k = malloc(sizeof(*k));
	*k = *f;
	k->magic = MAGIC_KERN;
	k->func = f;
	return k;
}

CUfunction fake_cuda_register(const char *mangled, int nparams, const uint32_t *offset,
			      const uint32_t *size, fake_kernel_fn fn, CUkernel *as_kernel)
{
	struct fk_func *f = func_new(mangled, nparams, offset, size);
	f->fn = fn;
	if (as_kernel)
		*as_kernel = (CUkernel)kernel_of(f);
	return (CUfunction)f;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
			   void **jitOptionsValues, unsigned int numJitOptions,
			   CUlibraryOption *libraryOptions, void **libraryOptionValues,
			   unsigned int numLibraryOptions)
{
	/* a fatbin: magic, version, header size, then the size of what
	 * follows the header (fatbinary's own layout) */
	struct { uint32_t magic; uint16_t version, header; uint64_t size; } h;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!library || !code)
		return CUDA_ERROR_INVALID_VALUE;
	/* FAKE_CUDA_NO_IMAGE=1: a GPU the fatbin has no code for */
	const char *none = getenv("FAKE_CUDA_NO_IMAGE");
	if (none && strcmp(none, "1") == 0)
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	memcpy(&h, code, sizeof(h));
	if (h.magic != 0xba55ed50u || h.header < sizeof(h) || h.size > (256u << 20))
		return CUDA_ERROR_INVALID_IMAGE;
	size_t len = h.header + h.size;
	struct fk_lib *lib = calloc(1, sizeof(*lib));
	lib->magic = MAGIC_LIB;
	int found = 0;
	/* the check kernels are the ones whose names (with their NUL, so
	 * np_check_f8e4m3 is not np_check_f8e4m3fnuz) are in an ELF string
	 * table of one of the fatbin's cubins */
	for (int t = 0; t < NP_DT_MAX; t++) {
		if (!memmem(code, len, check_names[t], strlen(check_names[t]) + 1))
			continue;
		static const uint32_t off[1] = { 0 }, size[1] = { sizeof(struct np_check_args) };
		struct fk_func *f = func_new(check_names[t], 1, off, size);
		f->check_dtype = t;
		lib->kern[t] = kernel_of(f);
		found++;
		const char *no_list = getenv("FAKE_CUDA_NO_LIST");
		if ((no_list && strcmp(no_list, "1") == 0) ||
		    !memmem(code, len, check_list_names[t], strlen(check_list_names[t]) + 1))
			continue;
		static const uint32_t lsize[1] = { sizeof(struct np_check_list) };
		f = func_new(check_list_names[t], 1, off, lsize);
		f->check_dtype = t;
		f->check_list = 1;
		lib->kern_list[t] = kernel_of(f);
	}
	if (found == NP_DT_MAX)
		COUNT(libraries);
	*library = (CUlibrary)lib;
	return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *pkernel, CUlibrary library, const char *name)
{
	struct fk_lib *lib = (struct fk_lib *)library;
	if (!lib || lib->magic != MAGIC_LIB || !pkernel || !name)
		return CUDA_ERROR_INVALID_HANDLE;
	for (int t = 0; t < NP_DT_MAX; t++) {
		if (lib->kern[t] && strcmp(lib->kern[t]->name, name) == 0) {
			*pkernel = (CUkernel)lib->kern[t];
			return CUDA_SUCCESS;
		}
		if (lib->kern_list[t] && strcmp(lib->kern_list[t]->name, name) == 0) {
			*pkernel = (CUkernel)lib->kern_list[t];
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

CUresult cuKernelGetFunction(CUfunction *pfunc, CUkernel kernel)
{
	struct fk_func *k = (struct fk_func *)kernel;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!k || k->magic != MAGIC_KERN || !pfunc)
		return CUDA_ERROR_INVALID_HANDLE;
	if (k->func->check_dtype < 0) {
		*pfunc = (CUfunction)k->func;
		return CUDA_SUCCESS;
	}
	/* the agent's check kernels: a function of this context's own */
	pthread_mutex_lock(&lock);
	struct fk_func **in = &k->in_ctx[current->dev];
	if (!*in) {
		*in = malloc(sizeof(**in));
		**in = *k->func;
		(*in)->func = *in;
		(*in)->ctx = current;
	}
	*pfunc = (CUfunction)*in;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

CUresult cuFuncLoad(CUfunction func)
{
	struct fk_func *f = (struct fk_func *)func;
	return f && f->magic == MAGIC_FUNC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult param_info(struct fk_func *f, uint32_t magic, size_t i, size_t *off, size_t *size)
{
	if (!f || f->magic != magic)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= (size_t)f->nparams || !off || !size)
		return CUDA_ERROR_INVALID_VALUE;
	*off = f->off[i];
	*size = f->size[i];
	return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t i, size_t *off, size_t *size)
{
	return param_info((struct fk_func *)func, MAGIC_FUNC, i, off, size);
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t i, size_t *off, size_t *size)
{
	return param_info((struct fk_func *)kernel, MAGIC_KERN, i, off, size);
}

/* ---- launches ---- */

/* The check kernel's launch, as finite_check.cu would take it: every
 * address it reads or writes must lie in memory the driver gave out. */
static int check_ok(const struct fk_op *op, const struct np_check_args *a)
{
	enum np_dtype t = (enum np_dtype)op->f->check_dtype;
	const struct np_gpu_ring *r = &a->ring;
	struct { const char *what; uintptr_t p; size_t n; } use[] = {
		{ "buffer", (uintptr_t)a->buf, a->numel * np_dtype_size(t) },
		{ "slot", (uintptr_t)a->slot, sizeof(*a->slot) },
		{ "ring slots", (uintptr_t)r->slots, (size_t)r->cap * sizeof(*r->slots) },
		{ "ring head", (uintptr_t)r->head, 4 },
		{ "ring dropped", (uintptr_t)r->dropped, 4 },
		{ "ring tail", (uintptr_t)r->tail, 4 },
	};
	if (op->block % 32 || op->block > NP_CHECK_THREADS || !op->grid ||
	    op->grid > NP_CHECK_MAX_BLOCKS) {
		fault("%s launched <<<%u, %u>>>", op->f->name, op->grid, op->block);
		return 0;
	}
	if (!r->cap || r->cap & (r->cap - 1)) {
		fault("%s: ring capacity %u", op->f->name, r->cap);
		return 0;
	}
	for (size_t i = 0; i < sizeof(use) / sizeof(use[0]); i++) {
		if (use[i].n && !mapped(use[i].p, use[i].n)) {
			fault("%s: %s at %#lx (%zu bytes) outside every allocation",
			      op->f->name, use[i].what, (unsigned long)use[i].p, use[i].n);
			return 0;
		}
		struct fk_alloc *m = use[i].n ? alloc_find(use[i].p, 1) : NULL;
		if (m && m->dev >= 0 && m->dev != op->dev) {   /* no peer access here */
			fault("%s on device %d: %s at %#lx is device %d's memory", op->f->name,
			      op->dev, use[i].what, (unsigned long)use[i].p, m->dev);
			return 0;
		}
	}
	return 1;
}

static void run_check(struct fk_op *op)
{
	if (op->f->check_list && (!op->rows || op->rows > NP_CHECK_LIST)) {
		fault("%s launched with %u rows", op->f->name, op->rows);
		return;
	}
	/* a list: each row of blocks checks its entry as a lone launch would;
	 * the last row first: on a GPU a list's entries finish, and push
	 * their results, in any order */
	for (unsigned row = op->rows; row-- > 0;) {
		const struct np_check_args *a = op->f->check_list
			? &((const struct np_check_list *)op->args)->e[row]
			: op->args;
		if (!check_ok(op, a))
			continue;
		/* last block first: finite_check.cu may not depend on block order */
		for (unsigned b = op->grid; b-- > 0;)
			np_emu_block(a, (enum np_dtype)op->f->check_dtype, b, op->grid, op->block);
		__atomic_add_fetch(&stats.check_blocks, op->grid, __ATOMIC_RELAXED);
		__atomic_add_fetch(&stats.checks, 1, __ATOMIC_RELAXED);
	}
}

static CUresult launch(struct fk_func *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		       unsigned by, unsigned bz, CUstream h, void **params, void **extra)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!f || (f->magic != MAGIC_FUNC && f->magic != MAGIC_KERN))
		return CUDA_ERROR_INVALID_HANDLE;
	f = f->func;   /* a CUkernel launches its function in this context */
	struct fk_stream *s = stream_of(h);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	/* refused on a GPU; the agent must never try it (gpu_ctx.h) */
	if (s->ctx != current || (f->ctx && f->ctx != current)) {
		fault("%s launched with device %u's context current, on a stream of device %u%s",
		      f->name, current->dev, s->ctx->dev,
		      f->ctx && f->ctx != current ? ", a function of another context" : "");
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	if ((params && extra) || (!params && !extra && f->nparams))
		return CUDA_ERROR_INVALID_VALUE;
	void *args = calloc(1, f->argbytes + 1);
	if (params) {
		for (int i = 0; i < f->nparams; i++)
			memcpy((char *)args + f->off[i], params[i], f->size[i]);
	} else if (extra) {
		void *buf = NULL;
		size_t size = 0;
		for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				buf = extra[i + 1];
			else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				size = *(size_t *)extra[i + 1];
			else {
				free(args);
				return CUDA_ERROR_INVALID_VALUE;
			}
		}
		if (!buf || size < f->argbytes) {
			free(args);
			return CUDA_ERROR_INVALID_VALUE;
		}
		memcpy(args, buf, f->argbytes);
	}
	struct fk_op *op = calloc(1, sizeof(*op));
	op->f = f;
	op->grid = gx * gy * gz;
	op->rows = 1;
	if (f->check_list) {   /* one row of blocks per entry */
		op->grid = gx * gz;
		op->rows = gy;
	}
	op->block = bx * by * bz;
	op->args = args;
	op->dev = (int)s->ctx->dev;
	COUNT(launches);
	if (f->check_dtype >= 0) {
		static int discard = -1;
		if (discard < 0)
			discard = getenv("FAKE_CUDA_DISCARD_CHECKS") != NULL;
		COUNT(check_launches);
		if (discard) {
			free(op->args);
			free(op);
			return CUDA_SUCCESS;
		}
	}
	enqueue(s, op);
	return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			CUstream h, void **kernelParams, void **extra)
{
	cuLaunchKernel_params p = { f, gx, gy, gz, bx, by, bz, shmem, h, kernelParams, extra };
	struct fk_func *fn = (struct fk_func *)f;
	const char *symbol = fn && (fn->magic == MAGIC_FUNC || fn->magic == MAGIC_KERN)
			     ? fn->name : NULL;
	return TRACED(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", &p, symbol,
		      launch(fn, gx, gy, gz, bx, by, bz, h, kernelParams, extra));
}

void fake_cuda_stats(struct fake_cuda_stats *out)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*out = stats;
	out->faults = __atomic_load_n(&faults, __ATOMIC_RELAXED);
}
