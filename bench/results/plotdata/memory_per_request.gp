set terminal pngcairo size 900,560 font 'sans,11'
set output 'memory_per_request.png'
set title 'Memory per request against context'
set xlabel 'context length (tokens)'
set ylabel 'MiB per request'
set grid
set key outside right top
set logscale x 2
set logscale y 10
plot 'plotdata/memory_per_request_0.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#1b9e77' title 'abc', \
     'plotdata/memory_per_request_1.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#d95f02' title 'rfa', \
     'plotdata/memory_per_request_2.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#7570b3' title 'luna', \
     'plotdata/memory_per_request_3.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#e7298a' title 'softmax'
