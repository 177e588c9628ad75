// One chart of the overview: Chart.js (through react-chartjs-2) on a canvas that names what it
// shows, with its figures as a table beneath for whoever cannot see the canvas.
import {
  ArcElement,
  BarElement,
  CategoryScale,
  Chart as ChartJS,
  type ChartData,
  type ChartOptions,
  Legend,
  LinearScale,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { Bar, Line } from 'react-chartjs-2';

ChartJS.register(ArcElement, BarElement, CategoryScale, Legend, LinearScale, LineElement, PointElement, Tooltip);

/** Okabe and Ito's palette: told apart with every common colour-vision deficiency. */
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];

export interface Series {
  label: string;
  values: number[];
}

interface ChartProps {
  kind: 'bar' | 'line';
  title: string;
  /** One sentence on what the chart shows, for the canvas's accessible name. */
  summary: string;
  labels: string[];
  series: Series[];
  stacked?: boolean;
  /** How a value reads in the table and tooltips. */
  format?: (value: number) => string;
}

export function Chart({ kind, title, summary, labels, series, stacked = false, format = String }: ChartProps) {
  const data: ChartData<'bar' | 'line'> = {
    labels,
    datasets: series.map((s, index) => ({
      label: s.label,
      data: s.values,
      backgroundColor: PALETTE[index % PALETTE.length],
      borderColor: PALETTE[index % PALETTE.length],
    })),
  };
  const options: ChartOptions<'bar' | 'line'> = {
    // Still, for people who get motion sick and for screenshots alike.
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    plugins: {
      legend: { position: 'bottom' },
      tooltip: { callbacks: { label: (item) => `${item.dataset.label}: ${format(Number(item.raw))}` } },
    },
    scales: { x: { stacked }, y: { stacked, beginAtZero: true } },
  };
  const canvasProps = { role: 'img', 'aria-label': `${title}: ${summary}` };
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div className="chart-canvas">
        {kind === 'bar' ? (
          <Bar data={data as ChartData<'bar'>} options={options as ChartOptions<'bar'>} {...canvasProps} />
        ) : (
          <Line data={data as ChartData<'line'>} options={options as ChartOptions<'line'>} {...canvasProps} />
        )}
      </div>
      <details>
        <summary>{title}: the figures</summary>
        <div className="overflow-auto">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {series.map((s) => (
                  <th scope="col" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {labels.map((label, row) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  {series.map((s) => (
                    <td key={s.label} className="number">
                      {format(s.values[row] ?? 0)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
