// Read faults on a file mapping with and without fault-around: 1,000 touches of random pages of FILE, three rounds,
// first as mapped, then with the range registered with userfaultfd in asynchronous write-protect mode (kernel 6.7+),
// which turns the kernel's fault-around off for it (`uffd_disable_fault_around`). Prints the pages mapped, the time a
// touch and the `madvise(MADV_DONTNEED)` of the range after. The file is opened for writing: registering a shared
// mapping needs VM_MAYWRITE. Needs userfaultfd rights (root, or vm.unprivileged_userfaultfd / UFFD_USER_MODE_ONLY).
//   cc -O2 -o fault-around-uffd fault-around-uffd.c && cat FILE >/dev/null && ./fault-around-uffd FILE
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <linux/userfaultfd.h>
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_UNPOPULATED (1<<13)
#define UFFD_FEATURE_WP_ASYNC (1<<15)
#endif
static long shared(void){FILE*f=fopen("/proc/self/statm","r");long a,b,c;fscanf(f,"%ld %ld %ld",&a,&b,&c);fclose(f);return c;}
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int argc,char**argv){
  int fd=open(argv[1],O_RDWR); struct stat st; fstat(fd,&st); size_t len=st.st_size;
  for(int mode=0;mode<2;mode++){
    unsigned char*p=mmap(0,len,PROT_READ,MAP_SHARED,fd,0);
    if(mode==1){
      int u=syscall(SYS_userfaultfd,O_CLOEXEC|O_NONBLOCK|UFFD_USER_MODE_ONLY);
      if(u<0){perror("userfaultfd");return 1;}
      struct uffdio_api api={.api=UFFD_API,.features=UFFD_FEATURE_WP_ASYNC|UFFD_FEATURE_WP_UNPOPULATED};
      if(ioctl(u,UFFDIO_API,&api)){perror("UFFDIO_API");return 1;}
      struct uffdio_register r={.range={(unsigned long)p,len},.mode=UFFDIO_REGISTER_MODE_WP};
      if(ioctl(u,UFFDIO_REGISTER,&r)){perror("UFFDIO_REGISTER");return 1;}
    }
    for(int round=0;round<3;round++){
    long s0=shared(); volatile unsigned x=0; srand(round+1);
    double t0=now();
    for(int i=0;i<1000;i++){ size_t pg=((size_t)rand()*7919)%(len/4096); x+=p[pg*4096]; }
    double t1=now();
    long grown=shared()-s0;
    double t2=now(); madvise(p,len,MADV_DONTNEED); double t3=now();
    printf("mode %d: %ld pages mapped for 1000 touches, %.2f us a touch, release %.0f us\n",mode,grown,(t1-t0)/1000,t3-t2);
    }
    munmap(p,len);
  }
}
