
r1Let there be light* 
Amen"(