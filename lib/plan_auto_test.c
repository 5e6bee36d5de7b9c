#include "tap.h"
int main(void){plan(0);return done_testing();}
