set terminal pngcairo size 900,560 font 'sans,11'
set output 'serving_ttft.png'
set title 'gRPC serving, Poisson arrivals: time to first token'
set xlabel 'request rate (req/s)'
set ylabel 'ms'
set grid
set key outside right top
set logscale y 10
plot 'plotdata/serving_ttft_0.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#1b9e77' title 'abc', \
     'plotdata/serving_ttft_1.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#d95f02' title 'rfa', \
     'plotdata/serving_ttft_2.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#7570b3' title 'luna', \
     'plotdata/serving_ttft_3.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#e7298a' title 'softmax', \
     'plotdata/serving_ttft_4.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 2 lc rgb '#1b9e77' title 'abc p99', \
     'plotdata/serving_ttft_5.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 2 lc rgb '#d95f02' title 'rfa p99', \
     'plotdata/serving_ttft_6.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 2 lc rgb '#7570b3' title 'luna p99', \
     'plotdata/serving_ttft_7.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 2 lc rgb '#e7298a' title 'softmax p99'
