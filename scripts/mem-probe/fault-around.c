// How many pages the kernel maps for one read fault on a file mapping (fault-around), with the default advice,
// MADV_RANDOM (what LMDB's MDB_NORDAHEAD sets) and MADV_SEQUENTIAL: 1,000 reads of random pages of FILE.
//   cc -O2 -o fault-around fault-around.c && cat FILE >/dev/null && ./fault-around FILE
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
static long shared(void){FILE*f=fopen("/proc/self/statm","r");long a,b,c;fscanf(f,"%ld %ld %ld",&a,&b,&c);fclose(f);return c;}
int main(int argc,char**argv){
  int fd=open(argv[1],O_RDONLY); struct stat st; fstat(fd,&st); size_t len=st.st_size;
  for(int mode=0;mode<3;mode++){
    unsigned char*p=mmap(0,len,PROT_READ,MAP_SHARED,fd,0);
    if(mode==1) madvise(p,len,MADV_RANDOM);
    if(mode==2) madvise(p,len,MADV_SEQUENTIAL);
    long s0=shared(); volatile unsigned x=0; srand(1);
    for(int i=0;i<1000;i++){ size_t pg=((size_t)rand()*7919)%(len/4096); x+=p[pg*4096]; }
    printf("mode %d: %ld pages mapped for 1000 touches\n",mode,shared()-s0);
    munmap(p,len);
  }
}
