set terminal pngcairo size 900,560 font 'sans,11'
set output 'context_latency.png'
set title 'Per-token decode latency against context'
set xlabel 'context length (tokens)'
set ylabel 'ms per token (batch 1)'
set grid
set key outside right top
set logscale x 2
plot 'plotdata/context_latency_0.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#1b9e77' title 'abc', \
     'plotdata/context_latency_1.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#d95f02' title 'rfa', \
     'plotdata/context_latency_2.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#7570b3' title 'luna', \
     'plotdata/context_latency_3.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#e7298a' title 'softmax'
