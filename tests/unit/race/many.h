/* many.h - F(n) for 4096 names gp_f0000.. (base 4), for a library with
 * as many imports: the loader takes long enough relocating it for a
 * concurrent GOT walk to meet it half done (test_gotpatch.c). */
#define F4(p) F(p##0) F(p##1) F(p##2) F(p##3)
#define F16(p) F4(p##0) F4(p##1) F4(p##2) F4(p##3)
#define F64(p) F16(p##0) F16(p##1) F16(p##2) F16(p##3)
#define F256(p) F64(p##0) F64(p##1) F64(p##2) F64(p##3)
#define F1024(p) F256(p##0) F256(p##1) F256(p##2) F256(p##3)
#define F4096(p) F1024(p##0) F1024(p##1) F1024(p##2) F1024(p##3)
