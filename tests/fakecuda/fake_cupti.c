/* fake_cupti.c - a fake CUPTI, built as libcupti.so.13, for the fake CUDA
 * driver (fake_cuda.c): the callback API only, which is all the agent
 * uses.  As in CUPTI up to 13.2, a process has one subscriber: a second
 * cuptiSubscribe fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
 * FAKE_CUPTI_TAKEN=1 plays a tool (Kineto, nsys) that subscribed first.
 *
 * The subscription lives in the driver, which calls back only for the
 * enabled cbids of the driver-API domain.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "fake.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int taken;
static int subscriber_token;   /* the handle we give out points here */

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			   void *userdata)
{
	const char *other = getenv("FAKE_CUPTI_TAKEN");
	if (!subscriber || !callback)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	if (taken || (other && strcmp(other, "1") == 0)) {
		pthread_mutex_unlock(&lock);
		fake_cuda_note_refused();
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	taken = 1;
	fake_cuda_set_subscriber(callback, userdata);
	pthread_mutex_unlock(&lock);
	*subscriber = (CUpti_SubscriberHandle)&subscriber_token;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	pthread_mutex_lock(&lock);
	if (!taken || subscriber != (CUpti_SubscriberHandle)&subscriber_token) {
		pthread_mutex_unlock(&lock);
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	taken = 0;
	fake_cuda_set_subscriber(NULL, NULL);
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
				CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (subscriber != (CUpti_SubscriberHandle)&subscriber_token || !taken)
		return CUPTI_ERROR_INVALID_PARAMETER;
	/* the other domains exist, but this fake delivers none of them */
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (cbid <= CUPTI_DRIVER_TRACE_CBID_INVALID || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	fake_cuda_enable_cbid(cbid, enable != 0);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	switch (result) {
	case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
	case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	default:
		*str = "CUPTI_ERROR_UNKNOWN";
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	return CUPTI_SUCCESS;
}
