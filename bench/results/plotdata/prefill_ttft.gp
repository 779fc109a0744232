set terminal pngcairo size 900,560 font 'sans,11'
set output 'prefill_ttft.png'
set title 'Time to first token against prompt length (engine only)'
set xlabel 'prompt tokens'
set ylabel 'ms'
set grid
set key outside right top
set logscale x 2
set logscale y 10
plot 'plotdata/prefill_ttft_0.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#1b9e77' title 'abc', \
     'plotdata/prefill_ttft_1.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#d95f02' title 'rfa', \
     'plotdata/prefill_ttft_2.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#7570b3' title 'luna', \
     'plotdata/prefill_ttft_3.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 dt 1 lc rgb '#e7298a' title 'softmax'
